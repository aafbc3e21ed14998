/**
 * Local failures, as opposed to RpcError (what the peer said). A call rejects with one of these
 * when no answer can come: the connection is gone, or the caller's deadline passed.
 */
export class ConnectionClosedError extends Error {
  override readonly name = 'ConnectionClosedError';

  constructor(message = 'jsonrpc: the connection is closed', options?: { cause?: unknown }) {
    super(message, options);
  }
}

export class RequestTimeoutError extends Error {
  override readonly name = 'RequestTimeoutError';

  constructor(
    readonly method: string,
    readonly timeoutMs: number,
  ) {
    super(`jsonrpc: '${method}' got no answer within ${timeoutMs} ms`);
  }
}
