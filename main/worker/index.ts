/** The worker's end of the participant connection (the child process the broker spawns). */
export { PARTICIPANT_FD, openParticipantFd } from './participant-fd.js';
export { BrokerError, WorkerSession, type WorkerTask } from './worker-session.js';
export { serveOneTask, type TaskEvents, type TaskRunner } from './serve-one-task.js';
