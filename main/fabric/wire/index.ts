export * from './sizes.js';
export * from './raw-json.js';
export * from './payloads.js';
export * from './wire-error.js';
export * from './envelope.js';
export * from './worker-to-broker.js';
export * from './broker-to-worker.js';
export * from './direction.js';
export { wireJsonSchema } from './json-schema.js';
