/**
 * The LLM agent end to end: the real worker program (`chatty-gateway worker --agent llm` on fd 3)
 * started by the real broker of a real gateway that serves the echo plugin fixture over MCP on its
 * Unix socket, talking to a stand-in OpenAI-compatible server on 127.0.0.1 (a real HTTP server
 * streaming SSE). Each test scripts the model's turns and checks, in the model's next request, what
 * the agent sent back.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { ApprovalRequest, QuestionToRoot } from '../../main/broker/index.js';
import type { ProgressEvent } from '../../main/fabric/wire/broker-to-worker.js';
import { FOLDER_SWAPPER, stopRacer } from './helpers.js';
import { API_KEY, MODEL, startLlmHarness, type LlmHarness } from './llm/harness.js';
import { StandInModel, lastToolResult, type ChatRequest } from './llm/stand-in-model.js';

let h: LlmHarness;
const models: StandInModel[] = [];

before(async () => {
  h = await startLlmHarness();
});

after(async () => {
  await h.close();
  await Promise.all(models.map((m) => m.close()));
});

async function model(script: Parameters<typeof StandInModel.start>[0]): Promise<StandInModel> {
  const started = await StandInModel.start(script);
  models.push(started);
  return started;
}

/** Every check a script step made passed. */
function noFailures(m: StandInModel): void {
  assert.deepEqual(
    m.failures.map((e) => e.message),
    [],
  );
}

const texts = (events: ProgressEvent[]): string[] => events.flatMap((e) => ('Text' in e ? [e.Text] : []));
const steps = (events: ProgressEvent[]): string[] => events.flatMap((e) => ('Step' in e ? [e.Step] : []));
const toolNames = (request: ChatRequest): string[] => (request.tools ?? []).map((t) => t.function.name);

/** What the agent asked the human (the broker's own additions to the request left out). */
const asked = ({ kind, command_or_path, diff_stat, asker }: ApprovalRequest) => ({ kind, command_or_path, ...(diff_stat === undefined ? {} : { diff_stat }), asker });

/** Approvals the root is asked, answered with `verdict`; the handler is removed after the test. */
function answerApprovals(verdict: 'approved' | 'denied'): { asked: ApprovalRequest[]; stop: () => void } {
  const asked: ApprovalRequest[] = [];
  const stop = h.root.onApproval(async (request) => {
    asked.push(request);
    return verdict;
  });
  return { asked, stop };
}

describe('the LLM agent', () => {
  test('a plugin tool call through the gateway: the echo tool’s result reaches the model, the answer streams back as artifact chunks', async () => {
    const args = { text: 'ping from the model', n: 7 };
    const m = await model([
      (req) => {
        assert.equal(req.model, MODEL);
        assert.equal(req.stream, true);
        assert.equal(req.messages[0]?.role, 'system');
        assert.deepEqual(req.messages[1], { role: 'user', content: 'echo something through the plugin' });
        const names = toolNames(req);
        for (const name of ['echo__echo', 'echo__fail', 'list_agents', 'invoke_agent', 'ask_user', 'exec', 'write_file', 'post_message']) {
          assert.ok(names.includes(name), `${name} is offered (offered: ${names.join(', ')})`);
        }
        return { toolCalls: [{ id: 'call-echo-1', name: 'echo__echo', arguments: args }] };
      },
      (req) => {
        const assistant = req.messages[req.messages.length - 2];
        assert.equal(assistant?.role, 'assistant');
        assert.deepEqual(assistant.role === 'assistant' ? assistant.tool_calls : undefined, [
          { id: 'call-echo-1', type: 'function', function: { name: 'echo__echo', arguments: JSON.stringify(args) } },
        ]);
        // The echo plugin answers its arguments-json: what the gateway ran, as the model gets it.
        assert.deepEqual(lastToolResult(req), { role: 'tool', tool_call_id: 'call-echo-1', content: JSON.stringify(args) });
        return { text: ['The echo said: ', 'ping from the model', '.'], usage: { prompt_tokens: 120, completion_tokens: 9 } };
      },
    ]);
    h.addLlmAgent('llm-echo', m.baseUrl);
    const progress: ProgressEvent[] = [];
    const result = await h.root.invoke('llm-echo', 'echo something through the plugin', { onProgress: (e) => progress.push(e) });

    noFailures(m);
    assert.equal(result.success, true, result.error);
    assert.equal(result.response, 'The echo said: ping from the model.');
    assert.deepEqual(texts(progress), ['The echo said: ', 'ping from the model', '.']);
    assert.ok(steps(progress).includes(`calling echo__echo ${JSON.stringify(args)}`), steps(progress).join(' | '));
    assert.equal(m.requests.length, 2);
    assert.equal(m.requests[0]?.headers.authorization, `Bearer ${API_KEY}`);
    // The call reached the plugin in the gateway (its credit meter sees each call first).
    assert.deepEqual(
      h.gw.metered.map((c) => [c.module, c.tool]),
      [['echo', 'echo']],
    );
    assert.equal(result.metadata?.usage?.inputTokens, 120);
    assert.equal(result.metadata?.usage?.outputTokens, 9);
  });

  test('an approved exec: the root is asked with the command, it runs in the worker’s workspace, its output reaches the model', async () => {
    const command = 'printf "hello from %s\\n" "$(pwd)" && printf ran > ran.txt && echo "key=${CHATTY_LLM_API_KEY:-none}"';
    const m = await model([
      () => ({ toolCalls: [{ id: 'call-exec-1', name: 'exec', arguments: { command } }] }),
      (req) => ({ text: `the command said: ${lastToolResult(req).content}` }),
    ]);
    h.addLlmAgent('llm-exec', m.baseUrl);
    const approvals = answerApprovals('approved');
    try {
      const result = await h.root.invoke('llm-exec', 'say hello from the shell');
      noFailures(m);
      assert.equal(result.success, true, result.error);
      const workspace = h.workspaceOf('llm-exec-0');
      assert.deepEqual(approvals.asked.map(asked), [{ kind: 'exec', command_or_path: command, asker: { agent: 'llm-exec-0', chain: ['root', 'llm-exec'] } }]);
      assert.equal(lastToolResult(m.requests[1]!.body).content, `exit code 0; output:\nhello from ${workspace}\nkey=none\n`);
      assert.equal(readFileSync(join(workspace, 'ran.txt'), 'utf8'), 'ran');
      assert.equal(result.response, `the command said: exit code 0; output:\nhello from ${workspace}\nkey=none\n`);
    } finally {
      approvals.stop();
    }
  });

  test('a denied exec: the command does not run and the model is told it was denied', async () => {
    const command = 'printf ran > ran.txt';
    const m = await model([
      () => ({ toolCalls: [{ id: 'call-exec-2', name: 'exec', arguments: { command } }] }),
      (req) => {
        assert.deepEqual(lastToolResult(req), {
          role: 'tool',
          tool_call_id: 'call-exec-2',
          content: `error: the user denied running ${JSON.stringify(command)}; it was not run`,
        });
        return { text: 'I was not allowed to run it.' };
      },
    ]);
    h.addLlmAgent('llm-denied', m.baseUrl);
    const approvals = answerApprovals('denied');
    try {
      const result = await h.root.invoke('llm-denied', 'write ran.txt with the shell');
      noFailures(m);
      assert.equal(result.success, true, result.error);
      assert.equal(result.response, 'I was not allowed to run it.');
      assert.equal(approvals.asked.length, 1);
      assert.equal(existsSync(join(h.workspaceOf('llm-denied-0'), 'ran.txt')), false);
    } finally {
      approvals.stop();
    }
  });

  test('write_file: inside the workspace after approval (with a diff stat); out of it refused without asking', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'chatty-llm-outside-'));
    const m = await model([
      () => {
        // A symlink inside the workspace that leads out of it.
        symlinkSync(outside, join(h.workspaceOf('llm-write-0'), 'link'));
        return {
          toolCalls: [
            { id: 'call-w-up', name: 'write_file', arguments: { path: '../escaped.txt', content: 'x' } },
            { id: 'call-w-abs', name: 'write_file', arguments: { path: join(outside, 'escaped.txt'), content: 'x' } },
            { id: 'call-w-link', name: 'write_file', arguments: { path: 'link/escaped.txt', content: 'x' } },
            { id: 'call-w-in', name: 'write_file', arguments: { path: 'notes/todo.md', content: '# todo\n- one\n' } },
          ],
        };
      },
      (req) => {
        const results = req.messages.flatMap((msg) => (msg.role === 'tool' ? [[msg.tool_call_id, msg.content]] : []));
        assert.deepEqual(results, [
          ['call-w-up', 'error: "../escaped.txt" has a ".." segment: a path must stay inside the workspace; nothing was written'],
          ['call-w-abs', `error: ${JSON.stringify(join(outside, 'escaped.txt'))} is absolute: a path must be relative to the workspace; nothing was written`],
          ['call-w-link', `error: "link/escaped.txt" leads out of the workspace (really ${JSON.stringify(realpathSync(outside))}); nothing was written`],
          ['call-w-in', 'wrote 13 bytes to notes/todo.md'],
        ]);
        return { text: 'written' };
      },
    ]);
    h.addLlmAgent('llm-write', m.baseUrl);
    const approvals = answerApprovals('approved');
    try {
      const result = await h.root.invoke('llm-write', 'write the todo list');
      noFailures(m);
      assert.equal(result.success, true, result.error);
      const workspace = h.workspaceOf('llm-write-0');
      assert.equal(readFileSync(join(workspace, 'notes/todo.md'), 'utf8'), '# todo\n- one\n');
      // Only the write inside was put to the human.
      assert.deepEqual(approvals.asked.map(asked), [{ kind: 'write', command_or_path: 'notes/todo.md', diff_stat: '+2 -0', asker: { agent: 'llm-write-0', chain: ['root', 'llm-write'] } }]);
      assert.deepEqual(readdirSync(outside), []);
    } finally {
      approvals.stop();
      rmSync(outside, { recursive: true, force: true });
    }
  });

  test('write_file: a file replaced while the person decided is not overwritten; the write is refused, nothing the person was not shown is lost', async () => {
    // Before: approved as '+1 -1' against 'old', the write replaced the 200 lines put there meanwhile.
    const unseen = Array.from({ length: 200 }, (_, i) => `a line the person was not shown ${i}`).join('\n') + '\n';
    const m = await model([
      () => {
        writeFileSync(join(h.workspaceOf('llm-changed-0'), 'notes.txt'), 'old\n');
        return { toolCalls: [{ id: 'call-w', name: 'write_file', arguments: { path: 'notes.txt', content: 'new\n' } }] };
      },
      (req) => {
        assert.deepEqual(lastToolResult(req), {
          role: 'tool',
          tool_call_id: 'call-w',
          content: 'error: "notes.txt" was changed after the person was asked to approve this write (made, replaced, edited or removed since its diff stat was counted): nothing was written',
        });
        return { text: 'not written' };
      },
    ]);
    h.addLlmAgent('llm-changed', m.baseUrl);
    const asked: ApprovalRequest[] = [];
    const stop = h.root.onApproval(async (request) => {
      asked.push(request);
      const file = join(h.workspaceOf('llm-changed-0'), 'notes.txt');
      writeFileSync(`${file}.new`, unseen);
      renameSync(`${file}.new`, file);
      return 'approved' as const;
    });
    try {
      const result = await h.root.invoke('llm-changed', 'rewrite the notes');
      noFailures(m);
      assert.equal(result.success, true, result.error);
      assert.deepEqual(asked.map(({ command_or_path, diff_stat }) => ({ command_or_path, diff_stat })), [{ command_or_path: 'notes.txt', diff_stat: '+1 -1' }]);
      assert.equal(readFileSync(join(h.workspaceOf('llm-changed-0'), 'notes.txt'), 'utf8'), unseen);
    } finally {
      stop();
    }
  });

  test('write_file: a path a person could read another way than the kernel (a backslash, a trailing "/") is refused without asking; an approved path is written as given', async () => {
    const m = await model([
      () => {
        mkdirSync(join(h.workspaceOf('llm-paths-0'), '.husky'));
        return {
          toolCalls: [
            { id: 'call-bs', name: 'write_file', arguments: { path: '.husky\\pre-commit', content: '#!/bin/sh\n' } },
            { id: 'call-dir', name: 'write_file', arguments: { path: 'notes/', content: 'x' } },
            { id: 'call-ok', name: 'write_file', arguments: { path: './notes//todo.md', content: 'one\n' } },
          ],
        };
      },
      (req) => {
        const results = req.messages.flatMap((msg) => (msg.role === 'tool' ? [[msg.tool_call_id, msg.content]] : []));
        assert.deepEqual(results, [
          ['call-bs', 'error: ".husky\\\\pre-commit" contains a backslash, which would be part of the name here but reads as a folder separator; use "/" between folders; nothing was written'],
          ['call-dir', 'error: "notes/" ends with "/": it names a folder, not a file; nothing was written'],
          ['call-ok', 'wrote 4 bytes to ./notes//todo.md'],
        ]);
        return { text: 'done' };
      },
    ]);
    h.addLlmAgent('llm-paths', m.baseUrl);
    const approvals = answerApprovals('approved');
    try {
      const result = await h.root.invoke('llm-paths', 'write the files');
      noFailures(m);
      assert.equal(result.success, true, result.error);
      const workspace = h.workspaceOf('llm-paths-0');
      assert.deepEqual(readdirSync(join(workspace, '.husky')), []);
      assert.deepEqual(readdirSync(join(workspace, 'notes')), ['todo.md']);
      assert.deepEqual(approvals.asked.map((a) => a.command_or_path), ['./notes//todo.md']);
    } finally {
      approvals.stop();
    }
  });

  test('write_file and exec: the agent pins its workspace as its task starts, so a process exchanging the workspace with a link to a folder outside mid-task never has a write land or a command run outside (Linux)', { skip: process.platform !== 'linux' ? 'renameat2 and /proc/self/fd are Linux' : false }, async () => {
    const outside = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-llm-outside-')));
    // Each write followed by a command; the command ran by the workspace's path before (marker made outside).
    const writes = Array.from({ length: 8 }, (_, i) => [
      { id: `call-w${i}`, name: 'write_file', arguments: { path: 'notes.txt', content: `write ${i}\n` } },
      { id: `call-x${i}`, name: 'exec', arguments: { command: 'touch marker' } },
    ]).flat();
    const m = await model([
      () => ({ toolCalls: [{ id: 'call-ready', name: 'ask_user', arguments: { question: 'ready?' } }] }),
      () => ({ toolCalls: writes }),
      () => ({ text: 'written' }),
    ]);
    h.addLlmAgent('llm-pin', m.baseUrl);
    let swapper: ChildProcess | undefined;
    // The task asks first (its workspace pinned by then); the swapping starts before the answer.
    const stop = h.root.onQuestion(async (request) => {
      swapper = spawn('python3', ['-c', FOLDER_SWAPPER, h.workspaceOf('llm-pin-0'), outside], { stdio: ['ignore', 'pipe', 'inherit'] });
      await new Promise((resolve) => swapper!.stdout!.once('data', resolve));
      return request.questions.map((q) => ({ id: q.id, answer: 'go' }));
    });
    const approvals = answerApprovals('approved');
    try {
      const result = await h.root.invoke('llm-pin', 'write notes');
      noFailures(m);
      assert.ok(swapper, 'the question was asked');
      assert.deepEqual(readdirSync(outside), [], `something was written outside (${result.error ?? 'completed'})`);
      assert.equal(result.success, true, result.error);
      assert.ok(approvals.asked.length > 1, 'writes were approved');
    } finally {
      await stopRacer(swapper);
      stop();
      approvals.stop();
      rmSync(outside, { recursive: true, force: true });
    }
  });

  test('list_agents and invoke_agent: another agent runs through the broker and its answer reaches the model', async () => {
    h.addPlanAgent('helper');
    const m = await model([
      () => ({ toolCalls: [{ id: 'call-list', name: 'list_agents', arguments: {} }] }),
      (req) => {
        const listed = JSON.parse(lastToolResult(req).content) as { name: string }[];
        assert.ok(listed.some((a) => a.name === 'helper'), JSON.stringify(listed));
        return { toolCalls: [{ id: 'call-invoke', name: 'invoke_agent', arguments: { agent: 'helper', prompt: JSON.stringify({ echo: 'done by the helper' }) } }] };
      },
      (req) => {
        assert.deepEqual(lastToolResult(req), { role: 'tool', tool_call_id: 'call-invoke', content: 'done by the helper' });
        return { text: 'the helper says: done by the helper' };
      },
    ]);
    h.addLlmAgent('llm-lead', m.baseUrl);
    const progress: ProgressEvent[] = [];
    const result = await h.root.invoke('llm-lead', 'get the helper to do it', { onProgress: (e) => progress.push(e) });
    noFailures(m);
    assert.equal(result.success, true, result.error);
    assert.equal(result.response, 'the helper says: done by the helper');
    assert.ok(steps(progress).includes('helper: helper-0 echoing'), steps(progress).join(' | '));
  });

  test('ask_user reaches the root’s question handler; a failing plugin tool is an error result the model reads', async () => {
    const m = await model([
      () => ({
        toolCalls: [
          { id: 'call-ask', name: 'ask_user', arguments: { question: 'Which database?', options: ['Postgres', 'SQLite'] } },
          { id: 'call-fail', name: 'echo__fail', arguments: {} },
        ],
      }),
      (req) => {
        const results = req.messages.flatMap((msg) => (msg.role === 'tool' ? [[msg.tool_call_id, msg.content]] : []));
        assert.deepEqual(results, [
          ['call-ask', 'Postgres'],
          ['call-fail', 'error: failed: it failed'],
        ]);
        return { text: 'Postgres it is.' };
      },
    ]);
    h.addLlmAgent('llm-ask', m.baseUrl);
    const asked: QuestionToRoot[] = [];
    const stop = h.root.onQuestion(async (request) => {
      asked.push(request);
      return [{ id: 'q1', answer: 'Postgres' }];
    });
    try {
      const result = await h.root.invoke('llm-ask', 'pick a database');
      noFailures(m);
      assert.equal(result.success, true, result.error);
      assert.deepEqual(asked, [
        { questions: [{ id: 'q1', question: 'Which database?', options: ['Postgres', 'SQLite'] }], asker: { agent: 'llm-ask-0', chain: ['root', 'llm-ask'] } },
      ]);
    } finally {
      stop();
    }
  });

  test('cancelled while the model is answering: the request is abandoned and the task ends cancelled', async () => {
    const m = await model([() => ({ hang: true })]);
    h.addLlmAgent('llm-cancel', m.baseUrl);
    const abort = new AbortController();
    const invoked = h.root.invoke('llm-cancel', 'take your time', { signal: abort.signal });
    await m.requested(1);
    abort.abort();
    const result = await invoked;
    noFailures(m);
    assert.equal(result.cancelled_by_user, true);
    assert.equal(result.success, false);
    assert.equal(result.error, 'cancelled by the broker');
  });

  test('the model API down: the task fails saying the API could not be reached', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    h.addLlmAgent('llm-down', `http://127.0.0.1:${port}/v1`);
    const result = await h.root.invoke('llm-down', 'anything');
    assert.equal(result.success, false);
    assert.match(result.error ?? '', new RegExp(`^the model API at http://127\\.0\\.0\\.1:${port}/v1 could not be reached: .*ECONNREFUSED`));
    assert.doesNotMatch(result.error ?? '', new RegExp(API_KEY));
  });

  test('the model API refusing the request: the task fails with its HTTP status and message', async () => {
    const m = await model([() => ({ status: 401, error: 'Incorrect API key provided' })]);
    h.addLlmAgent('llm-refused', m.baseUrl);
    const result = await h.root.invoke('llm-refused', 'anything');
    noFailures(m);
    assert.equal(result.success, false);
    assert.equal(result.error, `the model API at ${m.baseUrl} answered HTTP 401 for model ${MODEL}: Incorrect API key provided`);
  });

  test('not configured: the task fails naming the missing variables, and no model is asked', async () => {
    h.addLlmAgent('llm-unset', 'http://127.0.0.1:9/v1', { CHATTY_LLM_BASE_URL: undefined, CHATTY_LLM_MODEL: undefined });
    const result = await h.root.invoke('llm-unset', 'anything');
    assert.equal(result.success, false);
    assert.equal(result.error, 'the LLM agent is not configured: CHATTY_LLM_BASE_URL is not set; CHATTY_LLM_MODEL is not set');
  });

  test('a gateway named by the environment that does not answer: the task fails saying so, and no model is asked', async () => {
    const m = await model([]);
    const gone = join(h.gw.runtimeDir, 'no-such.sock');
    h.addLlmAgent('llm-nogw', m.baseUrl, { CHATTY_GATEWAY_SOCKET: gone });
    const result = await h.root.invoke('llm-nogw', 'anything');
    assert.equal(result.success, false);
    assert.equal(result.error, `the gateway at ${gone} could not be reached: fetch over ${gone} failed: connect ENOENT ${gone}`);
    assert.equal(m.requests.length, 0);
  });

  test('a model that keeps calling tools is stopped after CHATTY_LLM_MAX_TURNS requests', async () => {
    const call = () => ({ toolCalls: [{ id: 'call-again', name: 'echo__echo', arguments: { again: true } }] });
    const m = await model([call, call]);
    h.addLlmAgent('llm-loop', m.baseUrl, { CHATTY_LLM_MAX_TURNS: '2' });
    const result = await h.root.invoke('llm-loop', 'loop');
    noFailures(m);
    assert.equal(m.requests.length, 2);
    assert.equal(result.success, false);
    assert.equal(result.error, 'the model made tool calls in all 2 turns without a final answer (CHATTY_LLM_MAX_TURNS)');
  });
});

/** The refusal a broker taking 3 calls a connection and hardly any more (the rate's burst) gives the 4th and 5th. */
const PAST_THE_RATE = 'error: refused: too many calls: at most 0.001 per second per connection';

/**
 * `calls` made in one turn by an LLM agent on such a broker, every approval approved: the task's
 * result, the tool results the model read, and the files in its workspace. Before, a refused call ended the task
 * ('the LLM agent failed: refused: too many calls: at most 0.001 per second per connection') and the
 * model was never told.
 */
async function callsPastTheRate(calls: { id: string; name: string; arguments: Record<string, unknown> }[]) {
  const slow = await startLlmHarness({ serve: { limits: { callsPerSecond: 0.001, burst: 3 } } });
  let results: string[] = [];
  const m = await model([
    () => ({ toolCalls: calls }),
    (req) => {
      results = req.messages.flatMap((msg) => (msg.role === 'tool' ? [String(msg.content)] : []));
      return { text: 'done' };
    },
  ]);
  slow.addLlmAgent('llm-rate', m.baseUrl);
  const stop = slow.root.onApproval(async () => 'approved' as const);
  try {
    const result = await slow.root.invoke('llm-rate', 'many calls');
    noFailures(m);
    return { result, results, files: readdirSync(slow.workspaceOf('llm-rate-0')).sort() };
  } finally {
    stop();
    await slow.close();
  }
}

test('an exec or write_file whose approval the broker refuses (past the call rate) is an error the model reads, not the end of the task', async () => {
  const { result, results, files } = await callsPastTheRate([
    ...Array.from({ length: 4 }, (_, i) => ({ id: `call-w${i}`, name: 'write_file', arguments: { path: `notes-${i}.txt`, content: 'x\n' } })),
    { id: 'call-x', name: 'exec', arguments: { command: 'echo ran > ran.txt' } },
  ]);
  assert.equal(result.success, true, result.error);
  assert.deepEqual(results, ['wrote 2 bytes to notes-0.txt', 'wrote 2 bytes to notes-1.txt', 'wrote 2 bytes to notes-2.txt', PAST_THE_RATE, PAST_THE_RATE]);
  assert.deepEqual(files, ['notes-0.txt', 'notes-1.txt', 'notes-2.txt'], 'notes-3.txt and ran.txt were not made');
});

test('list_agents refused by the broker (past the call rate) is an error the model reads, not the end of the task', async () => {
  // d4a637d wrapped the approvals; list_agents called the session bare and its refusal ended the task.
  const { result, results } = await callsPastTheRate(Array.from({ length: 5 }, (_, i) => ({ id: `call-l${i}`, name: 'list_agents', arguments: {} })));
  assert.equal(result.success, true, result.error);
  assert.deepEqual(results.slice(3), [PAST_THE_RATE, PAST_THE_RATE]);
  assert.ok(results.slice(0, 3).every((r) => Array.isArray(JSON.parse(r))), JSON.stringify(results));
});
