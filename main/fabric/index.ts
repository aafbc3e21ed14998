/** The participant fabric: the worker connection from bytes to an admitted, registered node. */
export * from './wire/index.js';
export { FrameCodec, LineSplitter, decodeFrameText, encodeFrame, type FrameCodecOptions, type Incoming } from './codec/index.js';
export * from './limits/index.js';
export * from './admission/index.js';
