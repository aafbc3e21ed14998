/**
 * `@a2a-js/sdk`'s client, in its default 1.0 mode and in its 0.3-compatible mode, drives a real
 * A2A agent (the SDK's server, on loopback) through the gateway's Unix socket: card discovery,
 * send, stream, tasks/get, cancel, and a client hanging up mid-stream; a genuine 0.3 client that
 * sends no `A2A-Version`; a runner that goes silent mid-stream.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { LegacyJsonRpcTransport } from '@a2a-js/sdk/compat/v0_3/client';
import { A2aRunner, userMessage, type SeenRequest } from './runner.js';
import { startA2aGateway, type A2aGateway } from './helpers.js';

const RUNNER_TOKEN = 'runner-secret-7f3a';

function sendRequest(said: string): Parameters<Client['sendMessage']>[0] {
  return { tenant: '', message: userMessage(said), configuration: undefined, metadata: undefined };
}

function artifactText(task: Task): string {
  return task.artifacts.flatMap((a) => a.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : ''))).join('');
}

function isTask(result: unknown): result is Task {
  return typeof result === 'object' && result !== null && 'artifacts' in result && 'status' in result;
}

/** What an event is, in a few words. */
function describeEvent(event: StreamResponse): string {
  const p = event.payload;
  switch (p?.$case) {
    case 'task':
      return `task ${TaskState[p.value.status?.state ?? 0]}`;
    case 'statusUpdate':
      return `status ${TaskState[p.value.status?.state ?? 0]}`;
    case 'artifactUpdate':
      return `artifact ${p.value.artifact?.parts.map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('')}`;
    case 'message':
      return 'message';
    default:
      return 'nothing';
  }
}

/** The request's headers must carry the runner's token and nowhere the gateway's. */
function assertTokens(gw: A2aGateway, seen: SeenRequest): void {
  assert.equal(seen.headers.authorization, `Bearer ${RUNNER_TOKEN}`, "the runner's own bearer arrives");
  const gatewayToken = gw.gateway.token();
  assert.ok(!seen.rawHeaders.some((h) => h.includes(gatewayToken)), "the gateway's token never goes upstream");
  assert.ok(!seen.body.includes(gatewayToken));
}

const DIALECTS = [
  { dialect: '1.0', send: 'SendMessage', stream: 'SendStreamingMessage', get: 'GetTask', cancel: 'CancelTask', header: '1.0' },
  { dialect: '0.3', send: 'message/send', stream: 'message/stream', get: 'tasks/get', cancel: 'tasks/cancel', header: '0.3' },
] as const;

for (const d of DIALECTS) {
  describe(`@a2a-js/sdk client in ${d.dialect} mode through the gateway`, { timeout: 180_000 }, () => {
    let runner: A2aRunner;
    let gw: A2aGateway;
    let client: Client;

    before(async () => {
      runner = await new A2aRunner({ token: RUNNER_TOKEN }).start();
      gw = await startA2aGateway({ remote: ['echo', 'solo-only'], options: { remoteRunner: { url: runner.url, token: RUNNER_TOKEN } } });
      client = await gw.client('echo', d.dialect);
    });
    after(async () => {
      await gw.close();
      await runner.close();
    });

    it('discovers the card and speaks its own dialect', async () => {
      assert.equal(client.protocolVersion, d.dialect, 'the client chose the dialect of the card it read');
      const card = await client.getAgentCard();
      assert.equal(card.name, 'echo');
      assert.equal(card.version, '2.1.0');
      assert.equal(card.description, 'the remote agent echo');
      assert.equal(card.capabilities?.streaming, true);
      assert.deepEqual(card.defaultInputModes, ['text/plain']);
      assert.deepEqual(card.skills.map((s) => [s.id, s.tags]), [['echo', ['echo', 'remote']]]);
      const iface = card.supportedInterfaces[0]!;
      assert.equal(iface.url, 'http://localhost/a2a/echo');
      assert.equal(iface.protocolBinding, 'JSONRPC');
      assert.equal(iface.protocolVersion.startsWith(d.dialect), true);
      assert.equal(runner.requests.length, 0, 'the card comes from the manifest, not from the runner');
    });

    it('sends a message: forwarded with its A2A-Version and the runner’s token, the answer relayed', async () => {
      const seen = runner.nextRequest();
      const result = await client.sendMessage(sendRequest('hello'));
      assert.ok(isTask(result), 'a task comes back');
      assert.equal(result.status?.state, TaskState.TASK_STATE_COMPLETED);
      assert.equal(artifactText(result), 'echo: hello');
      const request = await seen;
      assert.equal(request.path, '/a2a/echo');
      assert.equal(request.method, d.send, 'the method name passes through unchanged');
      assert.equal(request.headers['a2a-version'], d.header, 'the client’s A2A-Version, byte for byte');
      assertTokens(gw, request);
    });

    it('forwards a remote_only module the same way', async () => {
      const only = await gw.client('solo-only', d.dialect);
      const seen = runner.nextRequest();
      const result = await only.sendMessage(sendRequest('alone'));
      assert.ok(isTask(result));
      assert.equal(artifactText(result), 'echo: alone');
      assert.equal((await seen).path, '/a2a/solo-only');
    });

    it('streams every event in order, each before the runner has gone on (nothing is buffered)', async () => {
      const seen = runner.nextRequest();
      const events: string[] = [];
      let taskId = '';
      for await (const event of client.sendMessageStream(sendRequest('steps 3'))) {
        events.push(describeEvent(event));
        if (event.payload?.$case === 'task') taskId = event.payload.value.id;
        const last = events.at(-1)!;
        if (last === 'status TASK_STATE_WORKING' || last.startsWith('artifact step')) {
          // The runner is waiting: the next event does not exist until this release.
          assert.equal(runner.finished.has(taskId), false, `"${last}" arrived while the runner had not finished`);
          runner.gate.release();
        }
      }
      assert.deepEqual(events, [
        'task TASK_STATE_SUBMITTED',
        'status TASK_STATE_WORKING',
        'artifact step 1',
        'artifact step 2',
        'artifact step 3',
        'status TASK_STATE_COMPLETED',
      ]);
      assert.equal(runner.finished.has(taskId), true);
      const request = await seen;
      assert.equal(request.method, d.stream);
      assertTokens(gw, request);
    });

    it('gets a task by id (tasks/get is forwarded)', async () => {
      const sent = await client.sendMessage(sendRequest('keep me'));
      assert.ok(isTask(sent));
      const seen = runner.nextRequest();
      const got = await client.getTask({ tenant: '', id: sent.id, historyLength: undefined });
      assert.equal(got.id, sent.id);
      assert.equal(got.status?.state, TaskState.TASK_STATE_COMPLETED);
      assert.equal(artifactText(got), 'echo: keep me');
      assert.equal((await seen).method, d.get);
    });

    it('cancels a running task; the open stream ends with the cancellation', async () => {
      const events: string[] = [];
      let cancelled: Task | undefined;
      for await (const event of client.sendMessageStream(sendRequest('hang'))) {
        events.push(describeEvent(event));
        if (event.payload?.$case === 'statusUpdate' && event.payload.value.status?.state === TaskState.TASK_STATE_WORKING) {
          const seen = runner.nextRequest();
          cancelled = await client.cancelTask({ tenant: '', id: event.payload.value.taskId, metadata: undefined });
          assert.equal((await seen).method, d.cancel);
        }
      }
      assert.equal(cancelled?.status?.state, TaskState.TASK_STATE_CANCELED);
      assert.deepEqual(events, ['task TASK_STATE_SUBMITTED', 'status TASK_STATE_WORKING', 'status TASK_STATE_CANCELED']);
      assert.ok(runner.cancelled.has(cancelled!.id));
    });

    it('a client that hangs up mid-stream aborts the upstream request at once', async () => {
      const controller = new AbortController();
      const seen = runner.nextRequest();
      const events: string[] = [];
      await assert.rejects(async () => {
        for await (const event of client.sendMessageStream(sendRequest('steps 2'), { signal: controller.signal })) {
          events.push(describeEvent(event));
          if (events.length === 2) controller.abort();
        }
      });
      assert.deepEqual(events, ['task TASK_STATE_SUBMITTED', 'status TASK_STATE_WORKING']);
      const request = await seen;
      await request.aborted; // resolves only when the runner's request closed before its answer ended
      assert.equal(request.wasAborted(), true);
    });
  });
}

describe('a genuine 0.3 client, which sends no A2A-Version, through the gateway to the SDK runner', { timeout: 180_000 }, () => {
  let runner: A2aRunner;
  let gw: A2aGateway;
  let transport: LegacyJsonRpcTransport;

  before(async () => {
    runner = await new A2aRunner({ token: RUNNER_TOKEN }).start();
    gw = await startA2aGateway({ remote: ['echo'], options: { remoteRunner: { url: runner.url, token: RUNNER_TOKEN } } });
    // The SDK's 0.3 wire transport on its own: the 0.3 JSON-RPC body, no A2A-Version header (the
    // SDK's Client adds one; a client written against 0.3 has none to add).
    transport = new LegacyJsonRpcTransport({ endpoint: 'http://localhost/a2a/echo', fetchImpl: gw.fetch });
  });
  after(async () => {
    await gw.close();
    await runner.close();
  });

  function assertNoVersion(seen: SeenRequest): void {
    assert.equal(seen.headers['a2a-version'], undefined, 'none was invented on the way');
    assert.ok(!seen.rawHeaders.some((h) => h.toLowerCase() === 'a2a-version'));
    assertTokens(gw, seen);
  }

  it('send: the runner gets no A2A-Version, takes the request as 0.3, and answers', async () => {
    const seen = runner.nextRequest();
    const result = await transport.sendMessage(sendRequest('old client'));
    assert.ok(isTask(result));
    assert.equal(result.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(artifactText(result), 'echo: old client');
    const request = await seen;
    assert.equal(request.method, 'message/send');
    assert.match(request.body, /"kind":"message"/, 'the 0.3 wire shape');
    assertNoVersion(request);

    const got = runner.nextRequest();
    const task = await transport.getTask({ tenant: '', id: result.id, historyLength: undefined });
    assert.equal(artifactText(task), 'echo: old client');
    const getRequest = await got;
    assert.equal(getRequest.method, 'tasks/get');
    assertNoVersion(getRequest);
  });

  it('stream: every event, in order', async () => {
    const seen = runner.nextRequest();
    const events: string[] = [];
    for await (const event of transport.sendMessageStream(sendRequest('steps 1'))) {
      events.push(describeEvent(event));
      if (events.at(-1) === 'status TASK_STATE_WORKING' || events.at(-1)!.startsWith('artifact')) runner.gate.release();
    }
    assert.deepEqual(events, ['task TASK_STATE_SUBMITTED', 'status TASK_STATE_WORKING', 'artifact step 1', 'status TASK_STATE_COMPLETED']);
    const request = await seen;
    assert.equal(request.method, 'message/stream');
    assertNoVersion(request);
  });
});

for (const dialect of ['1.0', '0.3'] as const) {
  describe(`a runner that goes silent mid-stream (the SDK client in ${dialect} mode)`, { timeout: 180_000 }, () => {
    it('the client gets the events so far, then an error naming the idle timeout; the runner sees its request closed', async () => {
      // Its own runner: the silent task keeps a place in the gate's queue for good.
      const runner = await new A2aRunner().start();
      const gw = await startA2aGateway({ remote: ['echo'], options: { remoteRunner: { url: runner.url, idleTimeoutMs: 400 } } });
      try {
        const client = await gw.client('echo', dialect);
        const seen = runner.nextRequest();
        const events: string[] = [];
        await assert.rejects(
          async () => {
            // `steps 1` waits for a release that never comes: after its first two events the runner is silent.
            for await (const event of client.sendMessageStream(sendRequest('steps 1'))) events.push(describeEvent(event));
          },
          { message: new RegExp(`the remote runner at ${runner.url} stopped sending its answer for 400 ms`) },
        );
        assert.deepEqual(events, ['task TASK_STATE_SUBMITTED', 'status TASK_STATE_WORKING']);
        const request = await seen;
        await request.aborted;
        assert.equal(request.wasAborted(), true);
      } finally {
        await gw.close();
        await runner.close();
      }
    });
  });
}
