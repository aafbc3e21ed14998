import type { Duplex } from 'node:stream';
import type { AdmittedNode } from './directory.js';
import { ParticipantConnection, type ServeOptions } from './participant-connection.js';
import type { ParticipantRegistry } from './registry.js';

/**
 * Serves an admitted node's connection over any duplex stream: a socketpair end today, a VM's
 * vsock tomorrow. The node is registered when it says hello (`connection.hello`) and deregistered
 * when the stream closes (`connection.closed`).
 */
export function serveConnection(
  stream: Duplex,
  registry: ParticipantRegistry,
  admittedNode: AdmittedNode,
  options: ServeOptions = {},
): ParticipantConnection {
  return new ParticipantConnection(stream, registry, admittedNode, options);
}
