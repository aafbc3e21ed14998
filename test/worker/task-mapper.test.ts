/**
 * TaskMapper alone, on a recording TaskEvents: which frames each agent-session event becomes, how
 * text deltas are held and flushed, and the outcome. (With serveOneTask over a real connection:
 * library.test.ts, "a library worker and a raw NDJSON worker".)
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TOOL_CALL_DESCRIPTION_CHARS, TaskMapper, describeToolCall, type TaskEvents } from '../../main/worker/index.js';

function recording() {
  const sent: unknown[] = [];
  const events: TaskEvents = {
    status: (state, message) => sent.push({ status: state, message }),
    artifact: (text, lastChunk = false) => sent.push({ artifact: text, lastChunk }),
  };
  return { sent, events };
}

describe('TaskMapper', () => {
  it('a step, two deltas and done: the last delta is the last chunk', () => {
    const { sent, events } = recording();
    const map = new TaskMapper(events);
    map.step('planning');
    map.textDelta('Hello, ');
    assert.deepEqual(sent, [{ status: 'working', message: 'planning' }]); // the latest delta is held
    map.textDelta('world');
    assert.deepEqual(map.done(), { state: 'completed' });
    assert.deepEqual(sent, [
      { status: 'working', message: 'planning' },
      { artifact: 'Hello, ', lastChunk: false },
      { artifact: 'world', lastChunk: true },
    ]);
  });

  it('a step or tool call sends the held delta first, so text and steps stay in order; deltas are never merged', () => {
    const { sent, events } = recording();
    const map = new TaskMapper(events);
    map.textDelta('a');
    map.toolCall('read_file', { path: 'a.ts' });
    map.textDelta('b');
    map.textDelta('');
    map.textDelta('c');
    map.toolCall('list');
    map.done('!');
    assert.deepEqual(sent, [
      { artifact: 'a', lastChunk: false },
      { status: 'working', message: 'calling read_file {"path":"a.ts"}' },
      { artifact: 'b', lastChunk: false },
      { artifact: 'c', lastChunk: false },
      { status: 'working', message: 'calling list' },
      { artifact: '!', lastChunk: true },
    ]);
  });

  it('done with no text sends no chunk; done(finalText) with nothing streamed sends it as the one last chunk', () => {
    const quiet = recording();
    assert.deepEqual(new TaskMapper(quiet.events).done(), { state: 'completed' });
    assert.deepEqual(quiet.sent, []);
    const whole = recording();
    new TaskMapper(whole.events).done('the whole answer');
    assert.deepEqual(whole.sent, [{ artifact: 'the whole answer', lastChunk: true }]);
  });

  it('failed flushes the held text as the last chunk and gives the message; the first outcome decides, later events are ignored', () => {
    const { sent, events } = recording();
    const map = new TaskMapper(events);
    map.textDelta('partial');
    assert.deepEqual(map.failed(new Error('model overloaded')), { state: 'failed', message: 'model overloaded' });
    assert.ok(map.ended);
    map.step('late');
    map.textDelta('late');
    assert.deepEqual(map.done('late'), { state: 'failed', message: 'model overloaded' });
    assert.deepEqual(sent, [{ artifact: 'partial', lastChunk: true }]);
    assert.deepEqual(new TaskMapper(recording().events).failed('not an Error'), { state: 'failed', message: 'not an Error' });
  });

  it('canceled ends the task canceled', () => {
    const { events } = recording();
    assert.deepEqual(new TaskMapper(events).canceled(), { state: 'canceled' });
    assert.deepEqual(new TaskMapper(events).canceled('stopped by the broker'), { state: 'canceled', message: 'stopped by the broker' });
  });

  it('a tool call is described by name and JSON arguments, cut to length; a custom description may replace it', () => {
    const long = describeToolCall('write_file', { text: 'x'.repeat(500) });
    assert.equal(long.length, TOOL_CALL_DESCRIPTION_CHARS);
    assert.ok(long.startsWith('calling write_file {"text":"xxx') && long.endsWith('…'));
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    assert.equal(describeToolCall('odd', cycle), 'calling odd (arguments not shown)');
    assert.equal(describeToolCall('odd', () => {}), 'calling odd'); // JSON has nothing for it
    const { sent, events } = recording();
    new TaskMapper(events, { describeToolCall: (name) => `using ${name}` }).toolCall('grep', { q: 'x' });
    assert.deepEqual(sent, [{ status: 'working', message: 'using grep' }]);
  });
});
