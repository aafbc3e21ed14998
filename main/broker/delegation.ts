import { CallError } from '../fabric/admission/index.js';
import { wireError } from '../fabric/wire/wire-error.js';

/** root → a → b → c → d is depth 4; one more is refused. */
export const MAX_DELEGATION_DEPTH = 4;

/** Who is calling, as the delegation rules see it. */
export interface DelegationCaller {
  /** The caller's node name (`root`, `lead-0`), named in a `not_listed` refusal. */
  name: string;
  /** Roles from the root down to the caller, the caller's included: `["root", "lead"]`. */
  chain: readonly string[];
  /** Chains of other tasks the caller works under as well (see `NodeState.otherChains`): a role in one of them is a cycle too. */
  otherChains?: readonly (readonly string[])[];
  /** The roles (or node names) the caller may invoke; `undefined` means every published agent. */
  roster: readonly string[] | undefined;
}

/**
 * Refuses a call the chain rules forbid, as a `delegation` error: the callee must be on the
 * caller's roster (by role or by node name), its role must not already be in the chain or in one
 * of the caller's other chains (a cycle, reported with the chain it is in),
 * and the callee's depth (the chain's length: the root is depth 0) must not pass the maximum.
 */
export function checkDelegation(caller: DelegationCaller, callee: { name: string; role: string }): void {
  if (caller.roster !== undefined && !caller.roster.includes(callee.role) && !caller.roster.includes(callee.name)) {
    throw new CallError(wireError({ kind: 'delegation', refusal: { reason: 'not_listed', caller: caller.name, callee: callee.name } }));
  }
  refuseCycle(caller.chain, callee.role);
  for (const chain of caller.otherChains ?? []) refuseCycle(chain, callee.role);
  const depth = caller.chain.length;
  if (depth > MAX_DELEGATION_DEPTH) {
    throw new CallError(wireError({ kind: 'delegation', refusal: { reason: 'too_deep', depth, max: MAX_DELEGATION_DEPTH } }));
  }
}

function refuseCycle(chain: readonly string[], role: string): void {
  if (chain.includes(role)) throw new CallError(wireError({ kind: 'delegation', refusal: { reason: 'cycle', chain: [...chain], callee: role } }));
}
