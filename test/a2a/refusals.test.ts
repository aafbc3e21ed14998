/**
 * Roles are never reached over HTTP (403, one body, a refusal row), a local plugin has no A2A
 * route (404), a `tasks/get` the gateway does not forward finds nothing (-32602), and the cards
 * each dialect's clients read, over raw HTTP on the socket.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LocalRunner } from '../../main/index.js';
import { ROLES_REFUSED } from '../../main/gateway/index.js';
import { AgentCardV03, AgentCardV1, AggregatedCard } from '../../main/gateway/a2a/index.js';
import { MAX_BATCH_ITEMS } from '../../main/gateway/a2a/wire.js';
import { RawConnection } from '../helpers/http.js';
import { A2aRunner } from './runner.js';
import { rowsFor, startA2aGateway, type A2aGateway } from './helpers.js';

const OWNER = new URL('./children/task-owner.ts', import.meta.url).pathname;
const tsx = import.meta.resolve('tsx');

function rpc(method: string, params: unknown, id: number | string = 1): object {
  return { jsonrpc: '2.0', id, method, params };
}

/** The exact 403 and its row. */
function assertRoleRefused(gw: A2aGateway, res: { status: number; body: string }, path: string, reason: RegExp): void {
  assert.equal(res.status, 403);
  assert.equal(res.body, JSON.stringify({ error: ROLES_REFUSED }));
  assert.equal(ROLES_REFUSED, 'fabric: roles are reached over the worker connection');
  const row = rowsFor(gw.rows, path).at(-1);
  assert.equal(row?.status, 403);
  assert.ok(row?.reason?.startsWith(ROLES_REFUSED), `the row is a refusal: ${row?.reason}`);
  assert.match(row!.reason!, reason);
}

describe('cards, 404s and the stateless tasks/get (no roles)', { timeout: 180_000 }, () => {
  let gw: A2aGateway;
  let runner: A2aRunner;
  before(async () => {
    runner = await new A2aRunner().start();
    gw = await startA2aGateway({ remote: ['echo'], local: ['plug'], options: { remoteRunner: { url: runner.url } } });
  });
  after(async () => {
    await gw.close();
    await runner.close();
  });

  const skill = { id: 'echo', name: 'echo', description: 'the remote agent echo', tags: ['echo', 'remote'], examples: [] };

  it('the 1.0 card at agent-card.json, whatever A2A-Version the request says', async () => {
    for (const version of [undefined, '0.3', '1.0']) {
      const res = await gw.request('GET', '/a2a/echo/.well-known/agent-card.json', undefined, version ? { 'a2a-version': version } : {});
      assert.equal(res.status, 200);
      AgentCardV1.parse(JSON.parse(res.body));
      assert.deepEqual(JSON.parse(res.body), {
        name: 'echo',
        description: 'the remote agent echo',
        supportedInterfaces: [{ url: 'http://localhost/a2a/echo', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
        version: '2.1.0',
        capabilities: { streaming: true, pushNotifications: false },
        defaultInputModes: ['text/plain'],
        defaultOutputModes: ['text/plain'],
        skills: [skill],
      });
    }
  });

  it('the 0.3 card at agent.json, whatever A2A-Version the request says', async () => {
    for (const version of [undefined, '1.0']) {
      const res = await gw.request('GET', '/a2a/echo/.well-known/agent.json', undefined, version ? { 'a2a-version': version } : {});
      assert.equal(res.status, 200);
      AgentCardV03.parse(JSON.parse(res.body));
      assert.deepEqual(JSON.parse(res.body), {
        protocolVersion: '0.3.0',
        name: 'echo',
        description: 'the remote agent echo',
        url: 'http://localhost/a2a/echo',
        preferredTransport: 'JSONRPC',
        version: '2.1.0',
        capabilities: { streaming: true, pushNotifications: false },
        defaultInputModes: ['text/plain'],
        defaultOutputModes: ['text/plain'],
        skills: [skill],
      });
    }
  });

  it('the endpoint URL follows the loopback Host the client used', async () => {
    const res = await gw.request('GET', '/a2a/echo/.well-known/agent.json', undefined, { host: '127.0.0.1:8080' });
    assert.equal((JSON.parse(res.body) as { url: string }).url, 'http://127.0.0.1:8080/a2a/echo');
  });

  it('the aggregated card lists forwarded modules with their origin, never a plugin', async () => {
    const res = await gw.request('GET', '/.well-known/agent.json');
    assert.equal(res.status, 200);
    AggregatedCard.parse(JSON.parse(res.body));
    assert.deepEqual(JSON.parse(res.body), {
      schema_version: '0.1',
      gateway: true,
      agents: [
        {
          name: 'echo',
          displayName: 'echo',
          description: 'the remote agent echo',
          version: '2.1.0',
          skills: [skill],
          capabilities: { streaming: true },
          origin: 'remote',
          url: 'http://localhost/a2a/echo',
        },
      ],
    });
  });

  it('a local plugin has no A2A route: 404 on every path, like a name that does not exist', async () => {
    for (const name of ['plug', 'nobody']) {
      const post = await gw.request('POST', `/a2a/${name}`, rpc('message/send', {}, 5));
      assert.equal(post.status, 404);
      assert.deepEqual(JSON.parse(post.body), { jsonrpc: '2.0', id: 5, error: { code: -32602, message: `module '${name}' not found` } });
      assert.equal(rowsFor(gw.rows, `/a2a/${name}`).at(-1)?.reason, `module '${name}' not found`);
      for (const card of ['agent-card.json', 'agent.json']) {
        const res = await gw.request('GET', `/a2a/${name}/.well-known/${card}`);
        assert.equal(res.status, 404);
        assert.deepEqual(JSON.parse(res.body), { error: `module '${name}' not found` });
      }
    }
    const mcp = await gw.request('POST', '/mcp/plug', rpc('ping', {}), { accept: 'application/json, text/event-stream' });
    assert.equal(mcp.status, 200, 'the plugin itself is loaded and served over MCP');
    assert.equal(runner.requests.length, 0);
  });

  it("tasks/get for a name that is not forwarded: -32602, the runner never asked", async () => {
    for (const [name, method] of [['plug', 'tasks/get'], ['nobody', 'tasks/get'], ['nobody', 'GetTask']] as const) {
      const res = await gw.request('POST', `/a2a/${name}`, rpc(method, { id: 'task-42' }, 'q'));
      assert.equal(res.status, 200);
      assert.deepEqual(JSON.parse(res.body), { jsonrpc: '2.0', id: 'q', error: { code: -32602, message: "task 'task-42' not found (stateless gateway)" } });
      const row = rowsFor(gw.rows, `/a2a/${name}`).at(-1);
      assert.deepEqual([row?.method, row?.status, row?.reason], ['POST', 200, "task 'task-42' not found (stateless gateway)"]);
    }
    assert.equal(runner.requests.length, 0);
  });

  it('tasks/get by the 1.0 resource name `tasks/<id>` finds the id in the name', async () => {
    for (const method of ['GetTask', 'tasks/get']) {
      const res = await gw.request('POST', '/a2a/nobody', rpc(method, { name: 'tasks/t-1' }, 'n'));
      assert.equal(res.status, 200);
      assert.deepEqual(JSON.parse(res.body), { jsonrpc: '2.0', id: 'n', error: { code: -32602, message: "task 't-1' not found (stateless gateway)" } });
    }
    assert.equal(runner.requests.length, 0);
  });

  it('a batch for a name that is not forwarded is answered as a batch: one answer per request, in an array', async () => {
    const getOne = await gw.request('POST', '/a2a/nobody', [rpc('tasks/get', { id: 't-1' }, 1)]);
    assert.equal(getOne.status, 200);
    assert.deepEqual(JSON.parse(getOne.body), [{ jsonrpc: '2.0', id: 1, error: { code: -32602, message: "task 't-1' not found (stateless gateway)" } }]);

    const mixed = await gw.request('POST', '/a2a/plug', [
      rpc('GetTask', { name: 'tasks/t-2' }, 'a'),
      { jsonrpc: '2.0', method: 'tasks/get', params: { id: 'quiet' } }, // a notification: no answer
      rpc('message/send', {}, 'b'),
      7,
    ]);
    assert.equal(mixed.status, 404, 'not everything in it is a tasks/get');
    assert.deepEqual(JSON.parse(mixed.body), [
      { jsonrpc: '2.0', id: 'a', error: { code: -32602, message: "task 't-2' not found (stateless gateway)" } },
      { jsonrpc: '2.0', id: 'b', error: { code: -32602, message: "module 'plug' not found" } },
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request' } },
    ]);
    assert.equal(
      rowsFor(gw.rows, '/a2a/plug').at(-1)?.reason,
      "task 't-2' not found (stateless gateway); task 'quiet' not found (stateless gateway); module 'plug' not found; Invalid Request",
    );

    const empty = await gw.request('POST', '/a2a/nobody', []);
    assert.equal(empty.status, 404);
    assert.deepEqual(JSON.parse(empty.body), { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request' } });

    const quiet = await gw.request('POST', '/a2a/nobody', [{ jsonrpc: '2.0', method: 'tasks/get', params: { id: 'x' } }]);
    assert.deepEqual([quiet.status, quiet.body], [204, ''], 'only notifications: nothing at all');
    const quietOther = await gw.request('POST', '/a2a/nobody', [{ jsonrpc: '2.0', method: 'message/send', params: {} }]);
    assert.deepEqual([quietOther.status, quietOther.body], [404, '']);
    assert.equal(runner.requests.length, 0);
  });

  it(`a batch of more than MAX_BATCH_ITEMS (${MAX_BATCH_ITEMS}) is one -32600, forwarded or not, its items never read`, async () => {
    assert.equal(MAX_BATCH_ITEMS, 100);
    const refused = { jsonrpc: '2.0', id: null, error: { code: -32600, message: `Invalid Request: a batch of more than ${MAX_BATCH_ITEMS} requests` } };
    // Bare numbers: before the cap each one got its own -32600 answer, the answer many times the request.
    const numbers = `[${Array(50_000).fill('1').join(',')}]`;
    for (const path of ['/a2a/nobody', '/a2a/echo']) {
      const res = await gw.request('POST', path, numbers);
      assert.equal(res.status, 400, path);
      assert.deepEqual(JSON.parse(res.body), refused, path);
      assert.equal(rowsFor(gw.rows, path).at(-1)?.reason, refused.error.message);
    }
    const over = await gw.request('POST', '/a2a/nobody', Array.from({ length: MAX_BATCH_ITEMS + 1 }, (_, i) => rpc('tasks/get', { id: `t-${i}` }, i)));
    assert.deepEqual([over.status, JSON.parse(over.body)], [400, refused]);
    // At the cap it is still a batch, one answer per request.
    const at = await gw.request('POST', '/a2a/nobody', Array.from({ length: MAX_BATCH_ITEMS }, (_, i) => rpc('tasks/get', { id: `t-${i}` }, i)));
    assert.equal(at.status, 200);
    assert.equal((JSON.parse(at.body) as unknown[]).length, MAX_BATCH_ITEMS);
    assert.equal(runner.requests.length, 0, 'nothing went to the runner');
  });

  it('a body that is not JSON (read as UTF-8) is a -32700 parse error, never forwarded', async () => {
    for (const body of ['not json', '', Buffer.from('{"jsonrpc":"2.0"}', 'utf16le').toString('latin1')]) {
      const res = await gw.request('POST', '/a2a/echo', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.deepEqual(JSON.parse(res.body), { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    }
    const utf8 = await gw.request('POST', '/a2a/nobody', 'not json', { 'content-type': 'application/json; charset=UTF-8' });
    assert.equal(utf8.status, 404, 'a name that is not forwarded is still the 404');
    assert.equal(runner.requests.length, 0);
  });

  it('a batch for a forwarded module goes to the runner as it came, and its answer comes back as it is', async () => {
    const batch = JSON.stringify([rpc('tasks/get', { id: 't-1' }, 1)]);
    const seen = runner.nextRequest();
    const res = await gw.request('POST', '/a2a/echo', batch);
    assert.equal((await seen).body, batch);
    // The SDK's server does not take batches: it answers one JSON-RPC error, and that is relayed.
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.body), { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid JSON-RPC Request.' } });
  });

  it('other methods and paths', async () => {
    const get = await gw.request('GET', '/a2a/echo');
    assert.equal(get.status, 405);
    assert.equal(get.headers['allow'], 'POST');
    const postCard = await gw.request('POST', '/a2a/echo/.well-known/agent.json', '{}');
    assert.equal(postCard.status, 405);
    assert.equal(postCard.headers['allow'], 'GET');
    const other = await gw.request('GET', '/a2a/echo/elsewhere');
    assert.equal(other.status, 404);
  });
});

describe('roles are refused over HTTP', { timeout: 180_000 }, () => {
  let gw: A2aGateway;
  let runner: A2aRunner;
  before(async () => {
    runner = await new A2aRunner().start();
    // `helper` is also a remote module's name: the role wins, nothing is forwarded.
    gw = await startA2aGateway({ remote: ['echo', 'helper'], options: { remoteRunner: { url: runner.url }, broker: { log: () => {} } } });
    gw.gateway.withVirtualAgent('helper', new LocalRunner({ command: process.execPath, args: ['-e', ''] }));
  });
  after(async () => {
    await gw.close();
    await runner.close();
  });

  it("a virtual agent's name: 403 on its endpoint and on both cards, with a refusal row", async () => {
    assertRoleRefused(gw, await gw.request('POST', '/a2a/helper', rpc('message/send', {})), '/a2a/helper', /'helper' is a role/);
    assertRoleRefused(gw, await gw.request('POST', '/a2a/helper', rpc('tasks/get', { id: 'x' })), '/a2a/helper', /'helper' is a role/);
    assertRoleRefused(gw, await gw.request('GET', '/a2a/helper/.well-known/agent-card.json'), '/a2a/helper/.well-known/agent-card.json', /'helper' is a role/);
    assertRoleRefused(gw, await gw.request('GET', '/a2a/helper/.well-known/agent.json'), '/a2a/helper/.well-known/agent.json', /'helper' is a role/);
    assertRoleRefused(gw, await gw.request('DELETE', '/a2a/helper'), '/a2a/helper', /'helper' is a role/);
    assert.equal(runner.requests.length, 0);
  });

  it('the aggregated card while the gateway has any role', async () => {
    assertRoleRefused(gw, await gw.request('GET', '/.well-known/agent.json'), '/.well-known/agent.json', /has roles/);
  });

  it("a participant's name, and a message naming a task a local participant owns", async () => {
    await gw.gateway.openParticipant('owner', process.execPath, ['--import', tsx, OWNER]);
    assertRoleRefused(gw, await gw.request('POST', '/a2a/owner-0', rpc('message/send', {})), '/a2a/owner-0', /'owner-0' is a role/);

    const root = gw.gateway.transport();
    const taskId = new Promise<string>((resolve) => root.onMessage((m) => resolve(m.text)));
    const controller = new AbortController();
    const call = root.invoke('owner-0', 'hold this', { signal: controller.signal });
    const owned = await taskId;
    assert.match(owned, /^task-/);

    const naming = [
      rpc('tasks/get', { id: owned }),
      rpc('GetTask', { id: owned }),
      rpc('tasks/cancel', { id: owned }),
      rpc('message/send', { message: { kind: 'message', role: 'user', messageId: 'm', taskId: owned, parts: [] } }),
      rpc('SendMessage', { message: { messageId: 'm', role: 'ROLE_USER', taskId: owned, parts: [] } }),
      rpc('message/send', { message: { kind: 'message', role: 'user', messageId: 'm', referenceTaskIds: [owned], parts: [] } }),
      rpc('tasks/pushNotificationConfig/get', { taskId: owned }),
      // The snake_case spellings the SDK's runner also reads.
      rpc('SendMessage', { message: { messageId: 'm', role: 'ROLE_USER', task_id: owned, parts: [] } }),
      rpc('SendMessage', { message: { messageId: 'm', role: 'ROLE_USER', reference_task_ids: [owned], parts: [] } }),
      rpc('GetTaskPushNotificationConfig', { task_id: owned }),
      // A UTF-8 BOM before the JSON (the runner's body parser skips it).
      '\uFEFF' + JSON.stringify(rpc('tasks/get', { id: owned })),
      // An envelope that is not a valid JSON-RPC request: its task ids are read all the same.
      { jsonrpc: '2.0', id: true, method: 'tasks/get', params: { id: owned } },
      { jsonrpc: '2.0', id: { x: 1 }, method: 'tasks/get', params: { id: owned } },
      [rpc('tasks/get', { id: 'other' }), { jsonrpc: '2.0', id: [], method: 7, params: { id: owned } }],
    ];
    for (const body of naming) {
      assertRoleRefused(gw, await gw.request('POST', '/a2a/echo', body), '/a2a/echo', /belongs to a local participant/);
    }
    // A charset the runner's JSON parser would decode differently: in UTF-7 this id is `T`,`"`… and
    // names the owned task; read as UTF-8 it names nothing. Only UTF-8 is forwarded.
    const utf7 = (text: string): string => `+${Buffer.from(text, 'utf16le').swap16().toString('base64').replace(/=+$/, '')}-`;
    const smuggled = JSON.stringify(rpc('tasks/get', { id: 'x' })).replace('"x"', `"x${utf7(`","id":"${owned}`)}"`);
    assert.doesNotMatch(smuggled, new RegExp(owned));
    for (const charset of ['utf-7', 'UTF-16LE', 'latin1']) {
      const res = await gw.request('POST', '/a2a/echo', smuggled, { 'content-type': `application/json; charset=${charset}` });
      assert.equal(res.status, 415, charset);
      assert.deepEqual(JSON.parse(res.body), { jsonrpc: '2.0', id: null, error: { code: -32600, message: `Invalid Request: the body must be UTF-8 JSON, not charset '${charset}'` } });
    }
    assert.equal(runner.requests.length, 0, 'nothing was forwarded');

    // An id the runner reads with String(value): an array (or an array in an array) is the owned
    // task to it while naming nothing to a check that reads strings. Every id that is not a string
    // or a number is refused (400, -32602, naming the field), never forwarded.
    const malformed: [unknown, string][] = [
      [rpc('tasks/get', { id: [owned] }), 'params.id is an array, not a string or a number'],
      [rpc('tasks/cancel', { id: [[owned]] }), 'params.id is an array, not a string or a number'],
      [rpc('GetTask', { name: [`tasks/${owned}`] }), 'params.name is an array, not a string'],
      [rpc('message/send', { message: { kind: 'message', role: 'user', messageId: 'm', taskId: [owned], parts: [] } }), 'params.message.taskId is an array, not a string or a number'],
      [rpc('SendMessage', { message: { messageId: 'm', role: 'ROLE_USER', task_id: { toString: owned }, parts: [] } }), 'params.message.task_id is an object, not a string or a number'],
      [rpc('message/send', { message: { kind: 'message', role: 'user', messageId: 'm', referenceTaskIds: [[owned]], parts: [] } }), 'params.message.referenceTaskIds[0] is an array, not a string or a number'],
      [rpc('message/send', { message: { kind: 'message', role: 'user', messageId: 'm', referenceTaskIds: owned, parts: [] } }), 'params.message.referenceTaskIds is a string, not an array'],
      [rpc('tasks/pushNotificationConfig/get', { taskId: true }), 'params.taskId is a boolean, not a string or a number'],
      [[rpc('tasks/get', { id: 'other' }), rpc('tasks/get', { id: [owned] })], 'params.id is an array, not a string or a number'],
    ];
    for (const [body, field] of malformed) {
      const res = await gw.request('POST', '/a2a/echo', body as object);
      const message = `Invalid params: ${field}`;
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.deepEqual(JSON.parse(res.body), { jsonrpc: '2.0', id: Array.isArray(body) ? null : 1, error: { code: -32602, message } });
      assert.equal(rowsFor(gw.rows, '/a2a/echo').at(-1)?.reason, message);
    }
    // A single header sent twice: the gateway checks one charset (or reads for one dialect), a
    // runner may read the other line's.
    // The same said on one line: HTTP lets two lines of a field be joined with a comma (the
    // gateway's parser then reads no charset at all, so UTF-8), and a parameter said twice (the
    // gateway reads the last charset, a runner may read the first).
    const twice: [string, string][] = [
      ['Content-Type', 'Content-Type: application/json\r\ncontent-type: application/json; charset=utf-7'],
      ['A2A-Version', 'Content-Type: application/json\r\nA2A-Version: 0.3\r\nA2A-Version: 1.0'],
      ['Content-Type', 'Content-Type: application/json, application/json; charset=utf-7'],
      ['Content-Type', 'Content-Type: application/json; charset="a,b"; x=1, application/json; charset=utf-7'],
      ['A2A-Version', 'Content-Type: application/json\r\nA2A-Version: 0.3, 1.0'],
      ['charset', 'Content-Type: application/json; charset=utf-7; CHARSET=utf-8'],
    ];
    for (const [header, lines] of twice) {
      const conn = await RawConnection.open(gw.socketPath);
      try {
        const body = JSON.stringify(rpc('tasks/get', { id: 'x' }));
        await conn.write(
          `POST /a2a/echo HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${gw.gateway.token()}\r\n` +
            `${lines}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        );
        const res = await conn.readResponse();
        const message = header === 'charset' ? 'Invalid Request: more than one charset in the Content-Type header' : `Invalid Request: more than one ${header} header`;
        assert.equal(res.status, 400, header);
        assert.deepEqual(JSON.parse(res.body), { jsonrpc: '2.0', id: null, error: { code: -32600, message } });
        assert.equal(rowsFor(gw.rows, '/a2a/echo').at(-1)?.reason, message);
      } finally {
        conn.close();
      }
    }
    assert.equal(runner.requests.length, 0, 'nothing was forwarded');

    controller.abort();
    const result = await call;
    assert.equal(result.cancelled_by_user, true);
    // The task has ended: its id is no one's any more, and the request is forwarded like any other.
    const after = await gw.request('POST', '/a2a/echo', rpc('tasks/get', { id: owned }), { 'a2a-version': '0.3' });
    assert.equal(after.status, 200);
    assert.equal(runner.requests.length, 1);
    assert.match(after.body, /not found/i);
  });

  it('the refusal is a row in edge.log too (never the token)', async () => {
    const res = await gw.request('POST', '/a2a/helper', rpc('message/send', {}));
    assert.equal(res.status, 403);
    await gw.gateway.stop(); // writes out the queued rows
    const rows = readFileSync(join(gw.runtimeDir, 'edge.log'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    const refused = rows.filter((r) => r['path'] === '/a2a/helper' && r['status'] === 403);
    assert.ok(refused.length >= 1);
    assert.match(String(refused.at(-1)!['reason']), /^fabric: roles are reached over the worker connection \('helper' is a role\)$/);
    assert.ok(!readFileSync(join(gw.runtimeDir, 'edge.log'), 'utf8').includes(gw.gateway.token()));
  });
});
