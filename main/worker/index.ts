/**
 * The worker's end of the participant connection (the child process the broker spawns), published
 * as `chatty-protocol-gateway/worker`. See README.md beside this file.
 */
export { PARTICIPANT_FD, openParticipantFd } from './participant-fd.js';
export { connectWorker, type ConnectOptions } from './connect.js';
export { BrokerError, WorkerSession, type AskOptions, type InvokeOptions, type WorkerTask } from './worker-session.js';
export { AbortError } from './abort-error.js';
export type { AbortOptions, CallOptions } from './pending-calls.js';
export type { QuestionHandler, QuestionReply } from './relayed-questions.js';
export { serveOneTask, taskEvents, type TaskEvents, type TaskRunner } from './serve-one-task.js';
export { TOOL_CALL_DESCRIPTION_CHARS, TaskMapper, describeToolCall, type TaskMapperOptions } from './task-mapper.js';
export { RawJson } from '../fabric/wire/raw-json.js';
export type * from './wire-types.js';
