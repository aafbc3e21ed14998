import { z } from 'zod';
import { BrokerMessage, BrokerResults } from './broker-to-worker.js';
import { ErrorFrame } from './envelope.js';
import { WorkerMessage, WorkerResults } from './worker-to-broker.js';

/**
 * The wire as JSON Schema (draft 2020-12), for docs: per direction, the request/notification
 * frames, the results by the method they answer, and the error frame. Opaque values, which are
 * `RawJson` in code, appear as `{}` (any JSON) with their description.
 */
export function wireJsonSchema(): Record<string, unknown> {
  const schema = (type: z.ZodType) => z.toJSONSchema(type, { unrepresentable: 'any', io: 'input' });
  const results = (map: Readonly<Record<string, z.ZodType>>) =>
    Object.fromEntries(Object.entries(map).map(([method, type]) => [method, schema(type)]));
  return {
    'worker-to-broker': { messages: schema(WorkerMessage), results: results(WorkerResults), error: schema(ErrorFrame) },
    'broker-to-worker': { messages: schema(BrokerMessage), results: results(BrokerResults), error: schema(ErrorFrame) },
  };
}
