import OpenAI from 'openai';

/** The model API failed; the message says where and how, for the task's `failed` outcome. */
export class ModelApiError extends Error {
  override readonly name = 'ModelApiError';
}

/**
 * One clear line for an error the client library threw: the endpoint, and what went wrong (not
 * reached, an HTTP status with the server's own message, timed out). The API key never appears.
 */
export function modelApiError(err: unknown, baseUrl: string, model: string): ModelApiError {
  const where = `the model API at ${baseUrl}`;
  if (err instanceof OpenAI.APIConnectionTimeoutError) return new ModelApiError(`${where} did not answer in time (model ${model})`, { cause: err });
  if (err instanceof OpenAI.APIConnectionError) {
    const cause = rootCause(err);
    return new ModelApiError(`${where} could not be reached: ${cause}`, { cause: err });
  }
  if (err instanceof OpenAI.APIError && err.status !== undefined) {
    const detail = serverMessage(err);
    return new ModelApiError(`${where} answered HTTP ${err.status} for model ${model}${detail === '' ? '' : `: ${detail}`}`, { cause: err });
  }
  const message = err instanceof Error ? err.message : String(err);
  return new ModelApiError(`${where} failed (model ${model}): ${message}`, { cause: err });
}

/** The innermost cause of a connection failure, with its code (`ECONNREFUSED`…). */
function rootCause(err: Error): string {
  let inner: unknown = err;
  while (inner instanceof Error && inner.cause instanceof Error) inner = inner.cause;
  if (!(inner instanceof Error) || inner === err) return err.message;
  const code = (inner as NodeJS.ErrnoException).code;
  return code !== undefined && !inner.message.includes(code) ? `${code}: ${inner.message}` : inner.message;
}

/** The server's `error.message` when its body had one, else the library's message without the status it repeats. */
function serverMessage(err: InstanceType<typeof OpenAI.APIError>): string {
  const body = err.error;
  if (body !== null && typeof body === 'object' && 'message' in body && typeof body.message === 'string') return body.message;
  return err.message.replace(/^\d{3}\s*/, '').replace(/^status code \(no body\)$/, '').trim();
}
