/**
 * Property-based fuzzing of a connected FrameCodec pair, shared by the test suite (a short run)
 * and `npm run fuzz` (as long as you like). Random, valid and mutated lines go to both directions:
 * nothing may throw; every line decodes, is dropped, or closes (and nothing is read after a close);
 * whatever decodes re-encodes and decodes to the same value.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FROM_BROKER, FROM_WORKER, FrameCodec, decodeFrameText, encodeFrame, type Direction } from '../../main/fabric/index.js';
import { HELLO } from './helpers.js';

type Side = 'to-broker' | 'to-worker';
const text = fc.string({ maxLength: 40 });
const id = fc.nat({ max: 3 }); // small ids name requests in flight often enough to decode results
const opaque = fc.json({ maxDepth: 3 });
const errorBody = fc.oneof(
  fc.record({ kind: fc.constant('refused'), reason: text, message: text }),
  fc.record({ kind: fc.constant('unknown_agent'), agent: text, message: text }),
  fc.record({ kind: fc.constant('delegation'), refusal: fc.record({ reason: fc.constant('too_deep'), depth: fc.nat(), max: fc.nat() }), message: text }),
);

/** Lines a worker could send (valid or nearly so). */
const workerLine = fc.oneof(
  fc.record({ id, card: fc.record({ name: text, description: text, version: text, skills: fc.constant([]) }) }).map(
    ({ id, card }) => JSON.stringify({ v: 3, id, method: 'session.hello', params: { card } }),
  ),
  fc.record({ id, agent: text, prompt: text }).map(({ id, agent, prompt }) => JSON.stringify({ v: 3, id, method: 'agent.invoke', params: { agent, prompt } })),
  id.map((id) => JSON.stringify({ v: 3, id, method: 'agent.list' })),
  fc.record({ id, to: text, t: text }).map(({ id, to, t }) => JSON.stringify({ v: 3, id, method: 'mailbox.post', params: { to, text: t } })),
  fc.record({ task: id, t: text, last: fc.boolean() }).map(({ task, t, last }) =>
    JSON.stringify({ v: 3, method: 'task.event', params: { kind: 'artifact', id: task, text: t, lastChunk: last } }),
  ),
  fc.record({ task: id, m: text }).map(({ task, m }) => JSON.stringify({ v: 3, method: 'task.event', params: { kind: 'status', id: task, state: 'working', message: m } })),
  id.map((id) => JSON.stringify({ v: 3, method: 'req.cancel', params: { id } })),
  fc.record({ id, state: fc.constantFrom('completed', 'failed', 'canceled'), trace: text, conversation: opaque, evidence: opaque }).map(
    ({ id, state, trace, conversation, evidence }) =>
      `{"v":3,"id":${id},"result":{"state":"${state}","metadata":{"trace":${JSON.stringify(trace)},"conversation":${conversation},"evidence":${evidence}}}}`,
  ),
  fc.record({ id, answers: fc.array(fc.record({ id: text, answer: text, custom: fc.boolean() }), { maxLength: 2 }) }).map(({ id, answers }) =>
    JSON.stringify({ v: 3, id, result: { answers } }),
  ),
  fc.record({ id, error: errorBody }).map(({ id, error }) => JSON.stringify({ v: 3, id, error })),
);

/** Lines a broker could send (valid or nearly so). */
const brokerLine = fc.oneof(
  fc.record({ id, taskId: text, t: text, roster: fc.array(text, { maxLength: 2 }) }).map(({ id, taskId, t, roster }) =>
    JSON.stringify({ v: 3, id, method: 'task.run', params: { taskId, text: t, spawnContext: { roster } } }),
  ),
  fc.record({ id, q: text }).map(({ id, q }) =>
    JSON.stringify({ v: 3, id, method: 'human.ask', params: { question: q, request: { questions: [{ id: 'q1', question: q, options: [] }], asker: { agent: 'a', chain: ['root'] } } } }),
  ),
  fc.record({ req: id, step: text }).map(({ req, step }) => JSON.stringify({ v: 3, method: 'req.progress', params: { id: req, event: { Step: step } } })),
  id.map((id) => JSON.stringify({ v: 3, method: 'req.cancel', params: { id } })),
  id.map((id) => JSON.stringify({ v: 3, id, result: [] })),
  fc.record({ id, response: text, conversation: opaque }).map(
    ({ id, response, conversation }) => `{"v":3,"id":${id},"result":{"success":true,"response":${JSON.stringify(response)},"metadata":{"conversation":${conversation}}}}`,
  ),
  id.map((id) => JSON.stringify({ v: 3, id, result: 'approved' })),
  fc.record({ id, error: errorBody }).map(({ id, error }) => JSON.stringify({ v: 3, id, error })),
);

/** A line bent out of shape: a character changed, a slice cut, a key doubled, a field added. */
function mutated(line: fc.Arbitrary<string>) {
  return fc.tuple(line, fc.nat(), fc.nat(), fc.constantFrom(0, 1, 2, 3, 4, 5), fc.string({ maxLength: 4, unit: 'binary' })).map(([l, a, b, how, junk]) => {
    const at = a % (l.length + 1);
    switch (how) {
      case 0:
        return l.slice(0, at) + junk + l.slice(at + 1);
      case 1:
        return l.slice(0, at) + l.slice(at + (b % 8));
      case 2:
        return l.replace('{', '{"v":3,');
      case 3:
        return l.replace(/\}$/, ',"extra":1}');
      case 4:
        return l.replace('"v":3', `"v":${b % 5}`);
      default:
        return l.replace(/"id":(\d+)/, `"id":${b % 4},"id":$1`);
    }
  });
}

const anyLine = (valid: fc.Arbitrary<string>) =>
  fc
    .oneof({ weight: 6, arbitrary: valid }, { weight: 3, arbitrary: mutated(valid) }, { weight: 1, arbitrary: fc.json() }, { weight: 1, arbitrary: fc.string({ unit: 'binary' }) })
    .map((l) => l.replace(/\n/g, ' '));

/** A pair of codecs past the hello, each with requests of its own in flight. */
function connectedPair(maxFrameBytes: number) {
  const log = () => {};
  const broker = FrameCodec.forBroker({ log, maxFrameBytes });
  const worker = FrameCodec.forWorker({ log, maxFrameBytes });
  broker.push(Buffer.from(`${HELLO}\n`));
  broker.respond(1, { name: 'w-0', scope: 'root', owner: null });
  for (const line of [
    broker.request({ method: 'task.run', params: { taskId: 't1', text: 'a' } }).line,
    broker.request({ method: 'human.ask', params: { question: 'q', request: { questions: [], asker: { agent: 'a', chain: [] } } } }).line,
  ]) {
    worker.push(Buffer.from(`${line}\n`));
  }
  worker.request({ method: 'agent.list' });
  worker.request({ method: 'agent.invoke', params: { agent: 'a', prompt: 'p', handle: null, include_trace: false } });
  worker.request({ method: 'human.approve', params: { kind: 'exec', command_or_path: 'ls' } });
  return { broker, worker };
}

const scenario = fc.record({
  side: fc.constantFrom<Side>('to-broker', 'to-worker'),
  smallCap: fc.boolean(),
  chunk: fc.integer({ min: 1, max: 4096 }),
  toBroker: fc.array(anyLine(workerLine), { minLength: 1, maxLength: 8 }),
  toWorker: fc.array(anyLine(brokerLine), { minLength: 1, maxLength: 8 }),
  // Raw bytes spliced into the stream (invalid UTF-8, stray newlines): strings alone never make them.
  noise: fc.option(fc.tuple(fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 4 })), { freq: 3 }),
});

const NEWLINE = 0x0a;

export const codecProperty = fc.property(scenario, ({ side, smallCap, chunk, toBroker, toWorker, noise }) => {
  const pair = connectedPair(smallCap ? 256 : 33 * 1024 * 1024);
  const codec = side === 'to-broker' ? pair.broker : pair.worker;
  const direction: Direction<unknown> = side === 'to-broker' ? FROM_WORKER : FROM_BROKER;
  let bytes = Buffer.from((side === 'to-broker' ? toBroker : toWorker).map((l) => `${l}\n`).join(''));
  if (noise) {
    const at = noise[0] % (bytes.length + 1);
    bytes = Buffer.concat([bytes.subarray(0, at), noise[1], bytes.subarray(at)]);
  }
  // A line is whatever ends in a newline; bytes after the last one are an unfinished line.
  let lines = 0;
  for (const byte of bytes) if (byte === NEWLINE) lines++;
  const outcomes = [];
  for (let at = 0; at < bytes.length; at += chunk) outcomes.push(...codec.push(bytes.subarray(at, at + chunk)));

  const closeAt = outcomes.findIndex((o) => o.type === 'close');
  if (closeAt < 0) assert.equal(outcomes.length, lines, 'one outcome per line');
  else assert.equal(closeAt, outcomes.length - 1, 'nothing after a close');
  assert.ok(outcomes.length <= lines + 1); // + the close for an unfinished line over the cap

  for (const o of outcomes) {
    if (o.type !== 'message' && o.type !== 'result' && o.type !== 'error') continue;
    const method = o.type === 'message' ? undefined : o.method;
    const again = decodeFrameText(encodeFrame(o.frame), direction, () => method);
    assert.notEqual(again.type, 'invalid', JSON.stringify(again));
    assert.deepStrictEqual((again as { frame: unknown }).frame, o.frame);
  }
});

/** Runs the property; throws fast-check's report (with the seed and the counterexample) on a failure. */
export function runCodecFuzz(parameters: fc.Parameters<[unknown]>): fc.RunDetails<[unknown]> {
  const details = fc.check(codecProperty as fc.IProperty<[unknown]>, parameters);
  if (details.failed) throw new Error(fc.defaultReportMessage(details) ?? 'fuzz: the property failed');
  return details;
}
