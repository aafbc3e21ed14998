import type { ParticipantCard } from '../fabric/wire/payloads.js';
import { openParticipantFd, PARTICIPANT_FD } from './participant-fd.js';
import { WorkerSession } from './worker-session.js';
import type { HelloResult } from './wire-types.js';

export interface ConnectOptions {
  /** The descriptor the broker handed this process (default 3). */
  fd?: number;
  /** The `schema` of the hello (the worker's handoff schema), when it has one. */
  schema?: string;
}

/** Opens fd 3 and says hello with `card`: the session, and who the broker says this worker is. */
export function connectWorker(card: ParticipantCard, options: ConnectOptions = {}): Promise<{ session: WorkerSession; hello: HelloResult }> {
  return WorkerSession.hello(openParticipantFd(options.fd ?? PARTICIPANT_FD), card, options.schema);
}
