export { FrameCodec, type FrameCodecOptions, type Incoming } from './frame-codec.js';
export { decodeFrameText, encodeFrame, type TextDecoded } from './frame-text.js';
export { LineSplitter, type SplitResult } from './line-splitter.js';
export { scanJson, type OpaqueSpan, type ScanResult } from './json-scan.js';
export { DropLog } from './drop-log.js';
export { IdTable, type ReadonlyIdTable } from './id-table.js';
