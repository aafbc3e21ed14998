import { EventEmitter } from 'node:events';
import type { ParticipantCard } from '../wire/payloads.js';
import type { AdmittedNode } from './directory.js';
import type { ParticipantConnection } from './participant-connection.js';

export interface Participant {
  node: AdmittedNode;
  card: ParticipantCard;
  connection: ParticipantConnection;
}

interface RegistryEvents {
  registered: [Participant];
  deregistered: [Participant, string];
}

/**
 * The nodes that said hello on a connection the broker made, by admitted name. A node stays
 * exactly as long as its connection: closing it deregisters the node.
 */
export class ParticipantRegistry extends EventEmitter<RegistryEvents> {
  private readonly byName = new Map<string, Participant>();

  register(participant: Participant): void {
    if (this.byName.has(participant.node.name)) throw new Error(`fabric: ${participant.node.name} is already registered`);
    this.byName.set(participant.node.name, participant);
    this.emit('registered', participant);
  }

  /** Removes `name` if it is still this connection's; says whether it did. */
  deregister(name: string, connection: ParticipantConnection, reason: string): boolean {
    const participant = this.byName.get(name);
    if (!participant || participant.connection !== connection) return false;
    this.byName.delete(name);
    this.emit('deregistered', participant, reason);
    return true;
  }

  get(name: string): Participant | undefined {
    return this.byName.get(name);
  }

  list(): Participant[] {
    return [...this.byName.values()];
  }
}
