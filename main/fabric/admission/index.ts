export { Directory, type AdmittedNode } from './directory.js';
export { ParticipantRegistry, type Participant } from './registry.js';
export {
  CallError,
  ParticipantConnection,
  type CallContext,
  type CallHandler,
  type RunningTask,
  type ServeOptions,
  type TaskEventListener,
} from './participant-connection.js';
export { serveConnection } from './serve-connection.js';
export { checkTaskRunSize, tooLargeFor, workerFrameCap } from './task-run-size.js';
export { openConnection, type OpenConnectionOptions, type OpenedConnection } from './open-connection.js';
export {
  MAX_SHARED_SOCKET_CONNECTIONS,
  PARTICIPANT_SOCKET_FILE,
  SHARED_SOCKET_LINE_BYTES,
  SHARED_SOCKET_REFUSAL,
  refuseConnection,
  withParticipantSocket,
  type ParticipantSocket,
  type ParticipantSocketOptions,
} from './participant-socket.js';
export { StderrTail } from './stderr-tail.js';
export { toAbortSignal } from './call-signal.js';
