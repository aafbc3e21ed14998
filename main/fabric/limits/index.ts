export * from './constants.js';
export { OutboundQueue } from './outbound-queue.js';
export { TokenBucket } from './token-bucket.js';
export { CallGate, type CallGateOptions } from './call-gate.js';
export { fitReply } from './reply-size.js';
