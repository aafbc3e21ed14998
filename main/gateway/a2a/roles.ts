import { refuse, type GatewayContext } from '../context.js';
import { taskIdsOf, type RpcBody } from './wire.js';

/** The body of every refusal of a role over HTTP: roles are reached over the worker connection only. */
export const ROLES_REFUSED = 'fabric: roles are reached over the worker connection';

/** What the role check needs of the broker (`Broker` has all three). */
export interface RoleDirectory {
  /** A role (a long-lived participant by its admitted name, or a virtual agent), or any other live node (a virtual agent's worker): none is served over HTTP. */
  isRole(name: string): boolean;
  /** A task a local participant is running. */
  ownsTask(taskId: string): boolean;
  /** Every role there is. */
  listAgents(): readonly unknown[];
}

/**
 * Why a request on `/a2a/{name}` must be refused because it reaches a role, or `undefined`: the
 * name is a role, or the body names a task a local participant owns (read from every item as it
 * came, valid envelope or not). There is no setting that
 * lets a role be reached over HTTP.
 */
export function roleReached(roles: RoleDirectory, name: string, body: RpcBody | undefined): string | undefined {
  if (roles.isRole(name)) return `'${name}' is a role`;
  for (const item of body?.raw ?? []) {
    for (const taskId of taskIdsOf(item)) {
      if (roles.ownsTask(taskId)) return `task '${taskId}' belongs to a local participant`;
    }
  }
  return undefined;
}

/** Whether the aggregated card must be refused: the gateway has a role. */
export function anyRole(roles: RoleDirectory): string | undefined {
  return roles.listAgents().length > 0 ? 'the aggregated card while the gateway has roles' : undefined;
}

/** 403 with the fixed body; the reason goes to the edge log's refusal row. */
export function refuseRole(ctx: GatewayContext, reason: string): void {
  refuse(ctx, 403, ROLES_REFUSED, `${ROLES_REFUSED} (${reason})`);
}
