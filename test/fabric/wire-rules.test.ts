/**
 * The wire's frame rules, line by line, on FrameCodec in memory (the connection-level
 * closes are proven with real children in connection-rules.test.ts): the four shapes, exactly one
 * of method/result/error, ids, params, strictness at every depth, error kinds and their fields,
 * who may send what, task states, and the encoder's side of "a null result is a result".
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FrameCodec, RawJson, wireError, type Incoming, type TaskOutcome, type WireError } from '../../main/fabric/index.js';
import { MAX_NESTING_DEPTH } from '../../main/fabric/wire/sizes.js';
import { CARD, HELLO } from './helpers.js';

type AnyIncoming = Incoming<{ method: string }>;

/** A broker codec past the hello, with task.run 1 in flight. */
function broker() {
  const codec = FrameCodec.forBroker({ log: () => {} });
  assert.equal(codec.push(Buffer.from(`${HELLO}\n`))[0]!.type, 'message');
  codec.respond(1, { name: 'w-0', scope: 'root', owner: null });
  const { id } = codec.request({ method: 'task.run', params: { taskId: 't', text: 'x' } });
  assert.equal(id, 1);
  return codec;
}

/** A worker codec with agent.invoke 1 in flight, and the broker's task.run 7 taken. */
function worker() {
  const codec = FrameCodec.forWorker({ log: () => {} });
  codec.request({ method: 'agent.invoke', params: { agent: 'a', prompt: 'p', handle: null, include_trace: false } });
  assert.equal(codec.push(Buffer.from('{"v":3,"id":7,"method":"task.run","params":{"taskId":"t","text":"x"}}\n'))[0]!.type, 'message');
  return codec;
}

function one(codec: { push(b: Buffer): AnyIncoming[] }, line: string | object): AnyIncoming {
  const text = typeof line === 'string' ? line : JSON.stringify(line);
  const out = codec.push(Buffer.from(`${text}\n`));
  assert.equal(out.length, 1);
  return out[0]!;
}

function closes(codec: { push(b: Buffer): AnyIncoming[] }, line: string | object, reason: RegExp = /decode error/): void {
  const incoming = one(codec, line);
  assert.equal(incoming.type, 'close', JSON.stringify(incoming));
  assert.match((incoming as { reason: string }).reason, reason);
}

function decodes(codec: { push(b: Buffer): AnyIncoming[] }, line: string | object, type: AnyIncoming['type'] = 'message'): AnyIncoming {
  const incoming = one(codec, line);
  assert.equal(incoming.type, type, JSON.stringify(incoming));
  return incoming;
}

describe('shapes', () => {
  it('exactly one of method, result, error', () => {
    closes(broker(), { v: 3, id: 1, result: { state: 'completed' }, error: wireError({ kind: 'failed', reason: 'r' }) }, /exactly one of/);
    closes(broker(), { v: 3, id: 2, method: 'agent.list', result: null }, /exactly one of/);
    closes(broker(), { v: 3, id: 1 }, /exactly one of/);
    closes(broker(), { v: 3, method: 'req.cancel', params: { id: 1 }, error: wireError({ kind: 'failed', reason: 'r' }) }, /exactly one of/);
  });

  it('a null result is a result: it names a request (dropped when nothing is in flight), it is never "no result"', () => {
    const codec = broker();
    const dropped = one(codec, '{"v":3,"id":40,"result":null}');
    assert.deepEqual(dropped, { type: 'dropped', reason: 'a result for id 40, which is not in flight' });
    // For task.run 1 it is a result whose payload is not a TaskOutcome.
    closes(codec, '{"v":3,"id":1,"result":null}', /decode error: result\./);
  });

  it('the encoder never writes a result-less frame: undefined goes out as null', () => {
    const codec = broker();
    decodes(codec, '{"v":3,"id":3,"method":"agent.list"}');
    assert.equal(codec.respond(3, undefined), '{"v":3,"id":3,"result":null}');
  });

  it('a result that cannot be encoded leaves its id in flight, so the call can still be failed', () => {
    const codec = broker();
    decodes(codec, '{"v":3,"id":3,"method":"agent.list"}');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    assert.throws(() => codec.respond(3, cyclic));
    assert.equal(codec.fail(3, wireError({ kind: 'failed', reason: 'r' })), '{"v":3,"id":3,"error":{"kind":"failed","reason":"r","message":"r"}}');
    assert.equal(codec.peerInFlight.size, 0);
  });

  it('a notification carries no id, a request always one', () => {
    closes(broker(), { v: 3, id: 5, method: 'req.cancel', params: { id: 1 } }, /decode error.*id/);
    closes(broker(), { v: 3, method: 'agent.list' }, /decode error: id/);
    closes(broker(), { v: 3, method: 'task.event' }, /decode error: params/);
    closes(broker(), { v: 3, id: 2, method: 'mailbox.post' }, /decode error: params/);
  });

  it('params only beside a method; none on agent.list, not even {} or null', () => {
    closes(broker(), { v: 3, id: 2, method: 'agent.list', params: {} });
    closes(broker(), { v: 3, id: 2, method: 'agent.list', params: null });
    closes(broker(), { v: 3, id: 1, result: { state: 'completed' }, params: {} });
    decodes(broker(), { v: 3, id: 2, method: 'agent.list' });
  });

  it('ids are non-negative integers: 0 is one, -1, 1.5 and "2" are not', () => {
    decodes(broker(), { v: 3, id: 0, method: 'agent.list' });
    closes(broker(), { v: 3, id: -1, method: 'agent.list' }, /decode error: id/);
    closes(broker(), { v: 3, id: 1.5, method: 'agent.list' }, /decode error: id/);
    closes(broker(), { v: 3, id: '2', method: 'agent.list' }, /decode error: id/);
    closes(broker(), { v: 3, id: -1, result: { state: 'completed' } }, /decode error: id/);
    closes(broker(), { v: 3, method: 'req.cancel', params: { id: -2 } }, /decode error: params\.id/);
  });

  it('v is 3, present on every frame', () => {
    closes(broker(), { id: 2, method: 'agent.list' }, /decode error: v/);
    closes(broker(), { v: '3', id: 2, method: 'agent.list' }, /decode error: v/);
    closes(broker(), { v: 4, id: 1, result: { state: 'completed' } }, /decode error: v/);
  });

  it('a frame is one JSON object: an array, a blank line or a scalar closes', () => {
    closes(broker(), '[1]', /a frame is a JSON object/);
    closes(broker(), '', /not a JSON frame/);
    closes(broker(), '3', /a frame is a JSON object/);
  });
});

describe('strict at every depth', () => {
  const deep: [string, object][] = [
    ['mailbox.post params', { v: 3, id: 2, method: 'mailbox.post', params: { to: 'a', text: 'b', cc: 'c' } }],
    ['a task.event', { v: 3, method: 'task.event', params: { kind: 'status', id: 1, state: 'working', progress: 0.5 } }],
    ['a spawn_context', { v: 3, id: 2, method: 'agent.invoke', params: { agent: 'a', prompt: 'p', spawn_context: { roster: [], branch: 'main' } } }],
    ['a question', { v: 3, id: 2, method: 'human.ask', params: { questions: [{ id: 'q', question: 'Q', default: 'x' }] } }],
    ['an outcome', { v: 3, id: 1, result: { state: 'completed', note: 'n' } }],
    ['usage', { v: 3, id: 1, result: { state: 'completed', metadata: { usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, lines: [], cost: 1 } } } }],
    ['metadata', { v: 3, id: 1, result: { state: 'completed', metadata: { trace: 't', extra: 1 } } }],
    ['an error', { v: 3, id: 1, error: { kind: 'failed', reason: 'r', message: 'r', code: 1 } }],
  ];
  for (const [where, frame] of deep) it(`an unknown field in ${where} closes`, () => closes(broker(), frame));

  it('an unknown field in a hello card closes (before the hello is taken)', () => {
    const codec = FrameCodec.forBroker({ log: () => {} });
    closes(codec, { v: 3, id: 1, method: 'session.hello', params: { card: { ...CARD, avatar: 'x' } } });
  });

  it("an unknown field closes naming a few of the unknown keys, clipped, and counting the rest: the reason is every owed task's outcome message", () => {
    const codec = FrameCodec.forBroker({ log: () => {} });
    const unknown = Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => [`k${i}`, 0]));
    const reason = (one(codec, { v: 3, id: 1, method: 'session.hello', params: { card: { ...CARD, [`long${'x'.repeat(100_000)}`]: 0, ...unknown } } }) as { reason: string }).reason;
    // Before: every key, twice (zod's message lists them, and they were appended again): 4.2 million characters here.
    assert.ok(reason.length < 400, `a reason of ${reason.length} characters`);
    assert.match(reason, /^decode error: params\.card: unknown keys "longx{56}…", "k0", "k1" and 199998 more$/);
  });

  it('a duplicate key closes at any depth, inside arrays and opaque values too', () => {
    closes(broker(), '{"v":3,"id":2,"method":"human.ask","params":{"questions":[{"id":"a","question":"q","id":"b"}]}}', /duplicate key "id"/);
    closes(broker(), '{"v":3,"v":3,"id":2,"method":"agent.list"}', /duplicate key "v"/);
    closes(broker(), '{"v":3,"id":1,"result":{"state":"completed","metadata":{"conversation":[{"a":1,"a":1}]}}}', /duplicate key "a"/);
  });

  it('a metadata key written with escapes is still opaque (and still checked)', () => {
    const codec = broker();
    const incoming = decodes(codec, '{"v":3,"id":1,"result":{"state":"completed","m\\u0065tadata":{"conv\\u0065rsation":{"x":[1,2]}}}}', 'result');
    const outcome = (incoming as { frame: { result: TaskOutcome } }).frame.result;
    assert.ok(outcome.metadata?.conversation instanceof RawJson);
    assert.equal(outcome.metadata.conversation.text, '{"x":[1,2]}');
    closes(broker(), '{"v":3,"id":1,"result":{"state":"completed","m\\u0065tadata":{"handoff":{"x":1,"x":2}}}}', /duplicate key "x"/);
  });
});

describe('depth', () => {
  it('an opaque value nesting past MAX_NESTING_DEPTH (counted from the frame) closes; one at it decodes', () => {
    const nest = (depth: number): string => '['.repeat(depth) + '0' + ']'.repeat(depth);
    const outcome = (value: string): string => `{"v":3,"id":1,"result":{"state":"completed","metadata":{"conversation":${value}}}}`;
    decodes(broker(), outcome(nest(MAX_NESTING_DEPTH - 3)), 'result');
    closes(broker(), outcome(nest(MAX_NESTING_DEPTH - 2)), /nesting deeper than 1000 at offset \d+/);
  });

  it('a frame without metadata nesting past MAX_NESTING_DEPTH closes for its depth before JSON.parse builds it', () => {
    // JSON.parse builds every level: before, a 32 MiB line of [ held ~0.9 GB and ~6 s of CPU, then
    // the key count overflowed the stack ('undecodable line (Maximum call stack size exceeded)').
    const call = (depth: number, pad = ''): string => `{"v":3,"id":2,"method":"agent.list","params":${`[${pad}`.repeat(depth)}0${']'.repeat(depth)}}`;
    closes(broker(), call(MAX_NESTING_DEPTH), /nesting deeper than 1000 at offset \d+/);
    closes(broker(), call(MAX_NESTING_DEPTH, ' \t\r'), /nesting deeper than 1000 at offset \d+/);
    closes(broker(), call(20_000), /nesting deeper than 1000 at offset \d+/);
    // At the cap (the frame is one level) it is judged by its schema, not its depth; empty [] and {} open no level.
    closes(broker(), call(MAX_NESTING_DEPTH - 1), /^(?!.*nesting)/);
    closes(broker(), `{"v":3,"id":2,"method":"agent.list","params":${'['.repeat(MAX_NESTING_DEPTH - 1)}[ ]${']'.repeat(MAX_NESTING_DEPTH - 1)}}`, /^(?!.*nesting)/);
    closes(broker(), `{"v":3,"id":2,"method":"agent.list","params":${'[{}, '.repeat(MAX_NESTING_DEPTH - 1)}{ }${']'.repeat(MAX_NESTING_DEPTH - 1)}}`, /^(?!.*nesting)/);
  });
});

describe('errors', () => {
  const kinds: WireError[] = [
    wireError({ kind: 'unknown_agent', agent: 'a' }),
    wireError({ kind: 'spawn_context_refused', field: 'roster', reason: 'r' }),
    wireError({ kind: 'refused', reason: 'r' }),
    wireError({ kind: 'delegation', refusal: { reason: 'not_listed', caller: 'a', callee: 'b' } }),
    wireError({ kind: 'delegation', refusal: { reason: 'cycle', chain: ['a', 'b'], callee: 'a' } }),
    wireError({ kind: 'delegation', refusal: { reason: 'too_deep', depth: 5, max: 4 } }),
    wireError({ kind: 'cancelled', reason: 'r' }),
    wireError({ kind: 'disconnected', reason: 'r' }),
    wireError({ kind: 'failed', reason: 'r' }),
    wireError({ kind: 'protocol', reason: 'r' }),
  ];
  for (const error of kinds) {
    it(`${error.kind}${error.kind === 'delegation' ? ` (${error.refusal.reason})` : ''} decodes with its fields`, () => {
      const incoming = decodes(broker(), { v: 3, id: 1, error }, 'error');
      assert.deepEqual((incoming as { frame: { error: WireError } }).frame.error, error);
    });
  }

  it('messages follow the notes for every kind', () => {
    assert.deepEqual(
      kinds.map((e) => e.message),
      [
        'unknown agent: a',
        'spawn context refused: roster: r',
        'refused: r',
        'not_listed: b is not on a\'s roster',
        'cycle: a -> b -> a',
        'too_deep: depth 5 > max 4',
        'cancelled: r',
        'disconnected: r',
        'r',
        'protocol: r',
      ],
    );
  });

  it('a kind outside the list, a kind without its fields, or an error without a message closes', () => {
    closes(broker(), { v: 3, id: 1, error: { kind: 'oops', reason: 'r', message: 'm' } }, /decode error: error\.kind/);
    closes(broker(), { v: 3, id: 1, error: { kind: 'unknown_agent', reason: 'r', message: 'm' } });
    closes(broker(), { v: 3, id: 1, error: { kind: 'refused', message: 'm' } });
    closes(broker(), { v: 3, id: 1, error: { kind: 'refused', reason: 'r' } });
    closes(broker(), { v: 3, id: 1, error: { kind: 'delegation', refusal: { reason: 'too_far' }, message: 'm' } });
  });

  it('an error naming nothing in flight is dropped; an error answering a task.run is its failure', () => {
    const codec = broker();
    assert.equal(one(codec, { v: 3, id: 9, error: wireError({ kind: 'failed', reason: 'r' }) }).type, 'dropped');
    assert.equal(decodes(codec, { v: 3, id: 1, error: wireError({ kind: 'failed', reason: 'r' }) }, 'error').type, 'error');
    assert.equal(codec.ownInFlight.size, 0);
  });
});

describe('who may send what', () => {
  it('a broker refuses what only a broker sends', () => {
    closes(broker(), { v: 3, id: 2, method: 'task.run', params: { taskId: 't', text: 'x' } }, /decode error: method/);
    closes(broker(), { v: 3, method: 'req.progress', params: { id: 1, event: { Step: 's' } } }, /decode error: method/);
    // human.ask goes both ways, with other params: the relayed form is the broker's.
    closes(broker(), { v: 3, id: 2, method: 'human.ask', params: { question: 'q-1', request: { questions: [], asker: { agent: 'a', chain: [] } } } });
  });

  it('a worker refuses what only a worker sends, human.approve included', () => {
    closes(worker(), { v: 3, id: 2, method: 'human.approve', params: { kind: 'exec', command_or_path: 'ls' } }, /decode error: method/);
    closes(worker(), { v: 3, id: 2, method: 'agent.invoke', params: { agent: 'a', prompt: 'p' } }, /decode error: method/);
    closes(worker(), { v: 3, method: 'task.event', params: { kind: 'status', id: 1, state: 'working' } }, /decode error: method/);
    closes(worker(), { v: 3, id: 2, method: 'human.ask', params: { questions: [] } });
  });

  it('a worker takes what a broker sends, and results for its own requests', () => {
    const codec = worker();
    decodes(codec, { v: 3, method: 'req.progress', params: { id: 1, event: { Admitted: 'a' } } });
    decodes(codec, { v: 3, method: 'req.cancel', params: { id: 7 } });
    decodes(codec, { v: 3, id: 8, method: 'human.ask', params: { question: 'q-1', request: { questions: [{ id: 'q', question: 'Q' }], asker: { agent: 'a', chain: ['root'] } } } });
    closes(worker(), { v: 3, method: 'req.progress', params: { id: 1, event: { Step: 's', Text: 't' } } });
    const result = decodes(codec, { v: 3, id: 1, result: { success: true, response: 'ok' } }, 'result');
    assert.deepEqual((result as { frame: { result: unknown } }).frame.result, { success: true, response: 'ok', messages: [], cancelled_by_user: false });
  });

  it('a req.cancel names the sender\'s own request: the broker drops one naming the broker\'s task.run', () => {
    const codec = broker();
    assert.equal(one(codec, { v: 3, method: 'req.cancel', params: { id: 1 } }).type, 'dropped');
    decodes(codec, { v: 3, id: 4, method: 'agent.list' });
    decodes(codec, { v: 3, method: 'req.cancel', params: { id: 4 } });
  });
});

describe('task states', () => {
  for (const state of ['completed', 'failed', 'canceled', 'input-required']) {
    it(`a task.event status may not say ${state}`, () => closes(broker(), { v: 3, method: 'task.event', params: { kind: 'status', id: 1, state } }));
  }

  it('a task.event status says submitted or working; an artifact\'s lastChunk defaults to false', () => {
    decodes(broker(), { v: 3, method: 'task.event', params: { kind: 'status', id: 1, state: 'submitted' } });
    const artifact = decodes(broker(), { v: 3, method: 'task.event', params: { kind: 'artifact', id: 1, text: 't' } });
    assert.equal((artifact as unknown as { frame: { params: { lastChunk: boolean } } }).frame.params.lastChunk, false);
  });

  for (const state of ['working', 'submitted', 'input-required', 'done']) {
    it(`a task.run's outcome may not be ${state}`, () => closes(broker(), { v: 3, id: 1, result: { state } }, /decode error: result\.state/));
  }

  it('task events name a task.run in flight; others are dropped', () => {
    const codec = FrameCodec.forBroker({ log: () => {} });
    codec.push(Buffer.from(`${HELLO}\n`));
    codec.respond(1, { name: 'w-0', scope: 'root', owner: null });
    codec.request({ method: 'human.ask', params: { question: 'q', request: { questions: [], asker: { agent: 'a', chain: [] } } } });
    assert.equal(one(codec, { v: 3, method: 'task.event', params: { kind: 'status', id: 1, state: 'working' } }).type, 'dropped');
  });
});
