import type { ErrorObject } from './wire.js';

/** The standard JSON-RPC 2.0 error codes. */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
} as const;

/**
 * An error that crosses the wire: what a handler throws to answer with a chosen code, and what a
 * caller's promise rejects with when the peer answers with an error. Anything else a handler
 * throws is answered as a bare Internal Error, so internals never leak.
 */
export class RpcError extends Error {
  override readonly name = 'RpcError';

  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }

  static parseError(message = 'Parse error', data?: unknown): RpcError {
    return new RpcError(ErrorCode.ParseError, message, data);
  }

  static invalidRequest(message = 'Invalid Request', data?: unknown): RpcError {
    return new RpcError(ErrorCode.InvalidRequest, message, data);
  }

  static methodNotFound(message = 'Method not found', data?: unknown): RpcError {
    return new RpcError(ErrorCode.MethodNotFound, message, data);
  }

  static invalidParams(message = 'Invalid params', data?: unknown): RpcError {
    return new RpcError(ErrorCode.InvalidParams, message, data);
  }

  static internalError(message = 'Internal error', data?: unknown): RpcError {
    return new RpcError(ErrorCode.InternalError, message, data);
  }

  static fromErrorObject(error: ErrorObject): RpcError {
    return new RpcError(error.code, error.message, error.data);
  }

  toErrorObject(): ErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}
