/**
 * What closes a connection: each rule with a real child on a real socketpair.
 * A close must end the node: deregistered, its child reaped, its tasks failed.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { MAX_FRAME_BYTES } from '../../main/fabric/index.js';
import { HELLO, Puppet, newFabric } from './helpers.js';

const puppets: Puppet[] = [];
after(() => puppets.forEach((p) => p.child.kill('SIGKILL')));

async function puppet(fabric = newFabric(), options: Parameters<typeof Puppet.open>[1] = {}) {
  const p = await Puppet.open(fabric, { log: () => {}, ...options });
  puppets.push(p);
  return { p, fabric };
}

/** Sends `line` after the hello and expects the connection to close for `reason`. */
async function closesFor(line: string | { hex: string }, reason: RegExp) {
  const { p, fabric } = await puppet();
  const name = p.opened.node.name;
  assert.ok(fabric.registry.get(name));
  if (typeof line === 'string') p.send(line);
  else p.command({ sendHex: line.hex });
  const why = await p.connection.closed;
  assert.match(why, reason);
  assert.equal(fabric.registry.get(name), undefined, 'deregistered');
  await p.exited(); // and the child is reaped
}

describe('what closes a connection', () => {
  it('a line over MAX_FRAME_BYTES closes only the sender', async () => {
    const fabric = newFabric();
    const { p: sender } = await puppet(fabric);
    const { p: bystander } = await puppet(fabric);
    sender.command({ oversize: MAX_FRAME_BYTES + 1 });
    assert.match(await sender.connection.closed, /a line over 34603008 bytes/);
    assert.equal(fabric.registry.get(sender.opened.node.name), undefined);
    assert.ok(bystander.connection.isOpen);
    bystander.command({ answerTasks: true });
    await bystander.ping(1);
    const task = await bystander.connection.runTask({ taskId: 't', text: 'still here?' });
    assert.deepEqual(await task.outcome, { state: 'completed' });
  });

  it('a line of exactly MAX_FRAME_BYTES is read (and decoded on its merits)', async () => {
    const { p } = await puppet();
    // Valid JSON padded with spaces to the cap: it must get past the splitter and decode.
    const frame = JSON.stringify({ v: 3, id: 2, method: 'mailbox.post', params: { to: 'x', text: 'hi' } });
    p.send(frame + ' '.repeat(MAX_FRAME_BYTES - frame.length));
    const answer = await p.answer(2);
    assert.equal((answer.error as { kind: string }).kind, 'refused'); // no call handler: refused, but decoded
    assert.ok(p.connection.isOpen);
  });

  it('a line that is not UTF-8', () => closesFor({ hex: Buffer.from('{"v":3,"id":2,"method":"agent.list"\xff}\n', 'latin1').toString('hex') }, /not UTF-8/));

  it('a duplicate key, however deep', () =>
    closesFor('{"v":3,"id":2,"method":"mailbox.post","params":{"to":"a","text":"b","to":"c"}}', /duplicate key "to"/));

  it('a duplicate key spelled with an escape', () => closesFor('{"v":3,"id":2,"method":"agent.list","\\u0076":3}', /duplicate key "v"/));

  it('an unknown field', () => closesFor('{"v":3,"id":2,"method":"agent.list","extra":true}', /decode error.*extra/));

  it('params on a method that takes none, even {}', () => closesFor('{"v":3,"id":2,"method":"agent.list","params":{}}', /decode error/));

  it('an error kind outside the list', async () => {
    const { p, fabric } = await puppet();
    const task = await p.connection.runTask({ taskId: 't', text: 'x' });
    p.send({ v: 3, id: task.id, error: { kind: 'oops', message: 'no such kind' } });
    assert.match(await p.connection.closed, /decode error/);
    assert.equal(fabric.registry.list().length, 0);
    assert.match((await task.outcome).message ?? '', /disconnected/);
  });

  it('a wrong v', () => closesFor('{"v":2,"id":2,"method":"agent.list"}', /decode error: v/));

  it('a method the worker may not send', () => closesFor('{"v":3,"id":2,"method":"task.run","params":{"taskId":"t","text":"x"}}', /decode error: method/));

  it('an id reused while still in flight', async () => {
    let held = 0;
    const { p } = await puppet(newFabric(), { calls: () => (held++, new Promise(() => {})) });
    p.send('{"v":3,"id":2,"method":"agent.list"}');
    p.send('{"v":3,"id":2,"method":"agent.list"}');
    assert.match(await p.connection.closed, /request id 2 reused while still in flight/);
    assert.equal(held, 1);
  });

  it('a first frame that is not a hello, with no reply', async () => {
    const fabric = newFabric();
    const { puppet, opening } = Puppet.start(fabric, { log: () => {}, initial: ['{"v":3,"id":1,"method":"agent.list"}'] });
    puppets.push(puppet);
    await assert.rejects(opening, /did not complete its hello: the first frame is agent.list, not session.hello/);
    await puppet.exited();
    // The puppet reports every line it gets: there was none.
    assert.equal(puppet.reports.filter((m) => 'got' in m).length, 0);
    assert.equal(fabric.registry.list().length, 0);
  });

  it('a notification as the first frame', async () => {
    const fabric = newFabric();
    const { puppet, opening } = Puppet.start(fabric, { log: () => {}, initial: ['{"v":3,"method":"req.cancel","params":{"id":1}}'] });
    puppets.push(puppet);
    await assert.rejects(opening, /the first frame is req.cancel, not session.hello/);
  });

  it('a second hello', async () => {
    const { p } = await puppet();
    p.send(HELLO.replace('"id":1', '"id":2'));
    assert.match(await p.connection.closed, /a second session.hello/);
  });

  it('a line that is not JSON at all', () => closesFor('hello?', /not a JSON frame/));
});
