/** FrameCodec in memory: the splitter's cap, opaque values, drop logging, encoding, the JSON Schema. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  FrameCodec,
  LineSplitter,
  MAX_OPAQUE_BYTES,
  RawJson,
  encodeFrame,
  wireError,
  wireJsonSchema,
  type TaskOutcome,
} from '../../main/fabric/index.js';
import { HELLO } from './helpers.js';

/** A broker codec past the hello with task.run `1` in flight. */
function brokerWithTask(log: (m: string) => void = () => {}) {
  const broker = FrameCodec.forBroker({ log });
  assert.equal(broker.push(Buffer.from(`${HELLO}\n`))[0]!.type, 'message');
  broker.respond(1, { name: 'w-0', scope: 'root', owner: null });
  const { id } = broker.request({ method: 'task.run', params: { taskId: 't', text: 'x' } });
  return { broker, id };
}

describe('LineSplitter', () => {
  it('reports an oversized line as soon as it crosses the cap, never holding more than the cap', () => {
    const splitter = new LineSplitter(100);
    let oversized = false;
    for (let n = 0; n < 30 && !oversized; n++) {
      oversized = splitter.push(Buffer.alloc(7, 'x')).oversized;
      assert.ok(splitter.buffered <= 100);
    }
    assert.ok(oversized);
    assert.equal(splitter.buffered, 0);
  });

  it('keeps lines that span chunks, and lines that share one', () => {
    const splitter = new LineSplitter(100);
    const text = (r: ReturnType<LineSplitter['push']>) => r.blocks.map((b) => b.toString()).join('');
    assert.equal(text(splitter.push(Buffer.from('ab'))), '');
    assert.equal(text(splitter.push(Buffer.from('c\nde\nf'))), 'abc\nde\n');
    assert.equal(text(splitter.push(Buffer.from('\n'))), 'f\n');
  });
});

describe('opaque metadata', () => {
  const conversation = '{"messages":[{"role":"user","content":"hi \\"there\\""}],  "n": [1, 2.5e3, -0, true, null]}';

  it('is kept as its raw text, never parsed, and re-encoded verbatim', () => {
    const { broker, id } = brokerWithTask();
    const line = `{"v":3,"id":${id},"result":{"state":"completed","metadata":{"trace":"t","conversation":${conversation},"evidence":"e"}}}\n`;
    const [incoming] = broker.push(Buffer.from(line));
    assert.equal(incoming!.type, 'result');
    const outcome = (incoming as { frame: { result: TaskOutcome } }).frame.result;
    assert.ok(outcome.metadata?.conversation instanceof RawJson);
    assert.equal(outcome.metadata.conversation.text, conversation);
    assert.equal((outcome.metadata.evidence as RawJson).text, '"e"');
    assert.equal(encodeFrame({ v: 3, id, result: outcome }), line.trimEnd());
  });

  for (const [what, bad, reason] of [
    ['invalid JSON', '{"a":01}', /bad number/],
    ['a raw control character', '"a\u0001b"', /control character/],
    ['a bad escape', '"\\x"', /bad escape/],
    ['a duplicate key', '{"a":1,"b":{"c":1,"c":2}}', /duplicate key "c"/],
  ] as const) {
    it(`with ${what} inside closes the connection`, () => {
      const { broker, id } = brokerWithTask();
      const [incoming] = broker.push(Buffer.from(`{"v":3,"id":${id},"result":{"state":"completed","metadata":{"handoff":${bad}}}}\n`));
      assert.equal(incoming!.type, 'close');
      assert.match((incoming as { reason: string }).reason, reason);
    });
  }

  it('of exactly 32 MiB is carried', () => {
    const { broker, id } = brokerWithTask();
    const big = `"${'z'.repeat(MAX_OPAQUE_BYTES - 2)}"`;
    const [incoming] = broker.push(Buffer.from(`{"v":3,"id":${id},"result":{"state":"completed","metadata":{"evidence":${big}}}}\n`));
    assert.equal(incoming!.type, 'result');
    assert.equal(((incoming as { frame: { result: TaskOutcome } }).frame.result.metadata!.evidence as RawJson).byteLength, MAX_OPAQUE_BYTES);
  });

  it('over 32 MiB closes the connection', () => {
    const { broker, id } = brokerWithTask();
    const big = `"${'z'.repeat(MAX_OPAQUE_BYTES - 1)}"`;
    const [incoming] = broker.push(Buffer.from(`{"v":3,"id":${id},"result":{"state":"completed","metadata":{"evidence":${big}}}}\n`));
    assert.equal(incoming!.type, 'close');
    assert.match((incoming as { reason: string }).reason, /opaque value over/);
  });
});

describe('FrameCodec', () => {
  it('logs the 1st, 2nd, 4th and 8th drop, and not the others', () => {
    const logged: string[] = [];
    const { broker } = brokerWithTask((m) => logged.push(m));
    for (let n = 0; n < 9; n++) assert.equal(broker.push(Buffer.from('{"v":3,"method":"req.cancel","params":{"id":40}}\n'))[0]!.type, 'dropped');
    assert.deepEqual(
      logged.map((m) => m.match(/drop #(\d+)/)![1]),
      ['1', '2', '4', '8'],
    );
    assert.equal(broker.dropped, 9);
  });

  it('reads nothing after a close', () => {
    const { broker } = brokerWithTask();
    assert.equal(broker.push(Buffer.from('nope\n{"v":3,"id":5,"method":"agent.list"}\n')).length, 1);
    assert.deepEqual(broker.push(Buffer.from('{"v":3,"id":6,"method":"agent.list"}\n')), []);
    assert.match(broker.closeReason!, /not a JSON frame/);
  });

  it('a worker codec refuses what only a worker may send', () => {
    const worker = FrameCodec.forWorker();
    const [incoming] = worker.push(Buffer.from(`${HELLO}\n`));
    assert.equal(incoming!.type, 'close');
  });

  it('numbers its own requests from 1', () => {
    const worker = FrameCodec.forWorker();
    assert.equal(worker.request({ method: 'agent.list' }).id, 1);
    assert.equal(worker.request({ method: 'agent.list' }).line, '{"v":3,"id":2,"method":"agent.list"}');
  });
});

describe('wire', () => {
  it('error messages follow the notes', () => {
    assert.equal(wireError({ kind: 'unknown_agent', agent: 'a' }).message, 'unknown agent: a');
    assert.equal(wireError({ kind: 'delegation', refusal: { reason: 'too_deep', depth: 5, max: 4 } }).message, 'too_deep: depth 5 > max 4');
    assert.equal(wireError({ kind: 'spawn_context_refused', field: 'roster', reason: 'r' }).message, 'spawn context refused: roster: r');
    assert.equal(wireError({ kind: 'failed', reason: 'boom' }).message, 'boom');
  });

  it('exports a JSON Schema of both directions', () => {
    const schema = wireJsonSchema() as Record<string, { messages: unknown; results: Record<string, unknown> }>;
    assert.ok(JSON.stringify(schema['worker-to-broker']!.messages).includes('"task.event"'));
    assert.ok(JSON.stringify(schema['broker-to-worker']!.messages).includes('"task.run"'));
    assert.ok(JSON.stringify(schema['worker-to-broker']!.results['task.run']).includes('never read by the broker'));
    assert.ok(JSON.stringify(schema).includes('"additionalProperties":false'));
  });

  it('the JSON Schema is strict everywhere, names every method once per direction, and gives agent.list no params', () => {
    const schema = wireJsonSchema() as Record<string, { messages: { oneOf: Record<string, any>[] } }>;
    const objects: Record<string, unknown>[] = [];
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) return node.forEach(walk);
      if (typeof node !== 'object' || node === null) return;
      const record = node as Record<string, unknown>;
      if (record.type === 'object') objects.push(record);
      Object.values(record).forEach(walk);
    };
    walk(schema);
    assert.ok(objects.length > 40);
    assert.deepEqual(objects.filter((o) => o.additionalProperties !== false), []);
    const methods = (direction: string) => schema[direction]!.messages.oneOf.map((m) => m.properties.method.const as string);
    assert.deepEqual(methods('worker-to-broker'), ['session.hello', 'agent.invoke', 'agent.list', 'mailbox.post', 'human.approve', 'human.ask', 'task.event', 'req.cancel']);
    assert.deepEqual(methods('broker-to-worker'), ['task.run', 'human.ask', 'req.progress', 'req.cancel']);
    const agentList = schema['worker-to-broker']!.messages.oneOf.find((m) => m.properties.method.const === 'agent.list')!;
    assert.deepEqual(Object.keys(agentList.properties), ['v', 'id', 'method']);
  });
});
