/** chatty-protocol-gateway: the library an embedder imports. */
export * from './gateway/index.js';
