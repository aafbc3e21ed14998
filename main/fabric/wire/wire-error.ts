import { z } from 'zod';

/**
 * `WireError`: the `error` of an error frame, tagged by `kind`, the variant's fields beside it,
 * plus `message` (display text only, never read back). A kind outside this list is a decode error.
 */

const DelegationRefusal = z.discriminatedUnion('reason', [
  z.strictObject({ reason: z.literal('not_listed'), caller: z.string(), callee: z.string() }),
  z.strictObject({ reason: z.literal('cycle'), chain: z.array(z.string()), callee: z.string() }),
  z.strictObject({ reason: z.literal('too_deep'), depth: z.number().int().nonnegative(), max: z.number().int().nonnegative() }),
]);

const withReason = <K extends string>(kind: K) => z.strictObject({ kind: z.literal(kind), reason: z.string(), message: z.string() });

export const WireError = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('unknown_agent'), agent: z.string(), message: z.string() }),
  z.strictObject({ kind: z.literal('spawn_context_refused'), field: z.string(), reason: z.string(), message: z.string() }),
  withReason('refused'),
  z.strictObject({ kind: z.literal('delegation'), refusal: DelegationRefusal, message: z.string() }),
  withReason('cancelled'),
  withReason('disconnected'),
  withReason('failed'),
  withReason('protocol'),
]);

export type DelegationRefusal = z.infer<typeof DelegationRefusal>;
export type WireError = z.infer<typeof WireError>;

/** A WireError without its message: what code builds; `wireError` adds the message the notes prescribe. */
export type WireErrorFields = WireError extends infer E ? (E extends WireError ? Omit<E, 'message'> : never) : never;

function refusalText(r: DelegationRefusal): string {
  switch (r.reason) {
    case 'not_listed':
      return `not_listed: ${r.callee} is not on ${r.caller}'s roster`;
    case 'cycle':
      return `cycle: ${[...r.chain, r.callee].join(' -> ')}`;
    case 'too_deep':
      return `too_deep: depth ${r.depth} > max ${r.max}`;
  }
}

/** Builds a WireError with the display message for its kind. */
export function wireError(fields: WireErrorFields): WireError {
  switch (fields.kind) {
    case 'unknown_agent':
      return { ...fields, message: `unknown agent: ${fields.agent}` };
    case 'spawn_context_refused':
      return { ...fields, message: `spawn context refused: ${fields.field}: ${fields.reason}` };
    case 'delegation':
      return { ...fields, message: refusalText(fields.refusal) };
    case 'failed':
      return { ...fields, message: fields.reason };
    case 'refused':
    case 'cancelled':
    case 'disconnected':
    case 'protocol':
      return { ...fields, message: `${fields.kind}: ${fields.reason}` } as WireError;
  }
}
