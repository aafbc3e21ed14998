/**
 * The scripted reference agent end to end: a real broker whose virtual agents run the real
 * `chatty-gateway worker` (main/cli/bin.ts under tsx, as `workerCommand()` starts it), each in a
 * directory of its own under the system's temporary folder; the test is the root.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { bundledAgents, detectWorkspace } from '../../main/agents/bundled.js';
import { Broker, RootTransport, type RootMessage } from '../../main/broker/index.js';
import { endsSoon, gitRepoOnMain, startScripted, steps, tempDir } from './helpers.js';

const outside = tempDir('chatty-agents-outside-');
after(() => rmSync(outside, { recursive: true, force: true }));

describe('say, step, echo, sleep, fail', () => {
  test('each line in order: say is a line of text, step a working status, anything else echoed, blank lines skipped', async () => {
    const fabric = startScripted(['a']);
    try {
      const result = await fabric.invoke('a', 'step planning\nsay hello\n\n  what is this?\nsleep 20\nsay done');
      assert.equal(result.success, true, result.error);
      assert.equal(result.response, 'hello\n  what is this?\ndone\n');
      assert.deepEqual(result.progress[0], { Admitted: 'a-0' });
      assert.deepEqual(steps(result.progress), ['planning']);
      assert.deepEqual(result.progress.slice(1), [{ Step: 'planning' }, { Text: 'hello\n' }, { Text: '  what is this?\n' }, { Text: 'done\n' }, { Text: '' }]);
    } finally {
      await fabric.close();
    }
  });

  test('fail ends the task failed with its reason; the lines after it do not run', async () => {
    const fabric = startScripted(['a']);
    try {
      const result = await fabric.invoke('a', 'say before\nfail not today\nsay after');
      assert.equal(result.success, false);
      assert.equal(result.error, 'not today');
      assert.equal(result.response, 'before\n');
    } finally {
      await fabric.close();
    }
  });

  test('a cancelled sleep ends the task at once, cancelled', async () => {
    const fabric = startScripted(['a']);
    try {
      const abort = new AbortController();
      const started = Date.now();
      const running = fabric.root.invoke('a', 'step waiting\nsleep 600000\nsay never', {
        signal: abort.signal,
        onProgress: (event) => {
          if ('Step' in event && event.Step === 'waiting') abort.abort();
        },
      });
      const result = await running;
      assert.equal(result.cancelled_by_user, true);
      assert.equal(result.success, false);
      assert.equal(result.response, '');
      assert.ok(Date.now() - started < 60_000);
    } finally {
      await fabric.close();
    }
  });
});

describe('exec', () => {
  test('approved: asks human.approve kind exec (the asker stamped), runs in its workspace, reports output and exit code', async () => {
    const fabric = startScripted(['a'], { approve: () => 'approved' });
    try {
      const result = await fabric.invoke('a', 'exec echo hi && pwd');
      assert.equal(result.success, true, result.error);
      assert.deepEqual(
        fabric.approvals.map(({ kind, command_or_path, asker }) => ({ kind, command_or_path, asker })),
        [{ kind: 'exec', command_or_path: 'echo hi && pwd', asker: { agent: 'a-0', chain: ['root', 'a'] } }],
      );
      assert.equal(result.response, `hi\n${fabric.workspaces.dir('a-0')}\n[exit code 0]\n`);
      assert.ok(steps(result.progress).includes('running echo hi && pwd'));
    } finally {
      await fabric.close();
    }
  });

  test('denied: the command does not run and the task fails', async () => {
    const marker = join(outside, 'denied-marker');
    const fabric = startScripted(['a'], { approve: () => 'denied' });
    try {
      const result = await fabric.invoke('a', `exec touch ${marker}\nsay after`);
      assert.equal(result.success, false);
      assert.equal(result.error, `exec denied: touch ${marker}`);
      assert.equal(result.response, '');
      assert.equal(fabric.approvals.length, 1);
      assert.equal(existsSync(marker), false);
    } finally {
      await fabric.close();
    }
  });

  test('cancelled while it runs: the command and what it started are ended, the task cancelled', async () => {
    const pidFile = join(outside, 'cancelled.pid');
    const fabric = startScripted(['a'], { approve: () => 'approved' });
    try {
      const abort = new AbortController();
      const result = await fabric.root.invoke('a', `exec sleep 600 & echo $! > ${pidFile}; echo started; wait`, {
        signal: abort.signal,
        onProgress: (event) => {
          if ('Text' in event && event.Text.includes('started')) abort.abort();
        },
      });
      assert.equal(result.cancelled_by_user, true);
      assert.equal(result.success, false);
      // The worker has been reaped by now (the call resolves only then), and it signals its commands' group first.
      assert.ok(await endsSoon(Number(readFileSync(pidFile, 'utf8'))));
    } finally {
      await fabric.close();
    }
  });

  test('a command that exits non-zero: its output (stdout and stderr) and code reported, the task failed', async () => {
    const fabric = startScripted(['a'], { approve: () => 'approved' });
    try {
      const result = await fabric.invoke('a', 'exec echo out; echo err >&2; printf tail; exit 3\nsay after');
      assert.equal(result.success, false);
      assert.equal(result.error, 'exec exited with code 3: echo out; echo err >&2; printf tail; exit 3');
      assert.equal(result.response, 'out\nerr\ntail\n[exit code 3]\n');
    } finally {
      await fabric.close();
    }
  });
});

describe('write', () => {
  test('approved: asks approval kind write with the diff stat, writes inside its workspace (a new file, then a change)', async () => {
    const fabric = startScripted(['a'], { approve: () => 'approved' });
    try {
      const result = await fabric.invoke('a', 'write notes/todo.txt one\\ntwo\nwrite notes/todo.txt one\\nthree\\nfour');
      assert.equal(result.success, true, result.error);
      assert.deepEqual(
        fabric.approvals.map(({ kind, command_or_path, diff_stat }) => ({ kind, command_or_path, diff_stat })),
        [
          { kind: 'write', command_or_path: 'notes/todo.txt', diff_stat: '+2 -0' },
          { kind: 'write', command_or_path: 'notes/todo.txt', diff_stat: '+2 -1' },
        ],
      );
      assert.equal(result.response, 'wrote notes/todo.txt (+2 -0)\nwrote notes/todo.txt (+2 -1)\n');
      assert.equal(readFileSync(join(fabric.workspaces.dir('a-0'), 'notes', 'todo.txt'), 'utf8'), 'one\nthree\nfour\n');
    } finally {
      await fabric.close();
    }
  });

  test('denied: nothing is written', async () => {
    const fabric = startScripted(['a'], { approve: () => 'denied' });
    try {
      const result = await fabric.invoke('a', 'write notes.txt hello');
      assert.equal(result.success, false);
      assert.equal(result.error, 'write denied: notes.txt');
      assert.equal(existsSync(join(fabric.workspaces.dir('a-0'), 'notes.txt')), false);
    } finally {
      await fabric.close();
    }
  });

  const escapes: { name: string; path: string; reason: RegExp }[] = [
    { name: 'a .. segment', path: '../escaped.txt', reason: /has a "\.\." segment/ },
    { name: 'a .. in the middle', path: 'sub/../../escaped.txt', reason: /has a "\.\." segment/ },
    { name: 'an absolute path', path: join(outside, 'escaped.txt'), reason: /is absolute/ },
    { name: 'a directory symlink pointing out', path: 'out-dir/escaped.txt', reason: /leads out of the workspace \(really / },
    { name: 'a file symlink pointing out', path: 'out-file', reason: /is a symlink/ },
  ];
  for (const { name, path, reason } of escapes) {
    test(`refused outside the workspace, without asking anyone: ${name}`, async () => {
      const target = join(outside, 'target.txt');
      writeFileSync(target, 'untouched\n');
      const fabric = startScripted(['a'], { approve: () => 'approved' }, {
        seed: (dir) => {
          mkdirSync(join(dir, 'sub'));
          symlinkSync(outside, join(dir, 'out-dir'));
          symlinkSync(target, join(dir, 'out-file'));
        },
      });
      try {
        const result = await fabric.invoke('a', `write ${path} pwned`);
        assert.equal(result.success, false);
        assert.match(result.error ?? '', /^write refused: /);
        assert.match(result.error ?? '', reason);
        assert.deepEqual(fabric.approvals, []);
        assert.equal(existsSync(join(outside, 'escaped.txt')), false);
        assert.equal(readFileSync(target, 'utf8'), 'untouched\n');
      } finally {
        await fabric.close();
      }
    });
  }
});

describe('write: what is approved is what is written', () => {
  // A backslash is a name's ordinary character on Linux and macOS but reads as a folder separator
  // (`.husky\pre-commit` looks like the git hook); a trailing `/` or a final `.` names a folder. Each
  // is refused before anyone is asked, so the path a human approves is never read another way.
  const ambiguous: { path: string; reason: RegExp }[] = [
    { path: '.husky\\pre-commit', reason: /contains a backslash/ },
    { path: 'notes/', reason: /ends with "\/": it names a folder, not a file/ },
    { path: 'notes/.', reason: /ends with "\.": it names a folder, not a file/ },
    // Half a UTF-16 pair: Node gives the kernel U+FFFD's bytes for it, so "a<U+DC00>.txt" asked about wrote "a\ufffd.txt".
    { path: 'a\udc00.txt', reason: /contains a lone surrogate \(U\+DC00\), which is no character/ },
    // The hidden file's mark in another case: in a case-insensitive folder (macOS's, ext4's or tmpfs's +F) it names the same
    // file as a write's hidden file, there while that write is in flight or left by a writer killed mid-way.
    { path: '.notes.txt.CHATTY-WRITE-0123456789ab', reason: /is named like the hidden file a write is made in/ },
    { path: '.husky/x.Chatty-Write-notes', reason: /is named like the hidden file a write is made in/ },
  ];
  for (const { path, reason } of ambiguous) {
    test(`refused without asking anyone: ${JSON.stringify(path)}`, async () => {
      const fabric = startScripted(['a'], { approve: () => 'approved' }, { seed: (dir) => mkdirSync(join(dir, '.husky')) });
      try {
        const result = await fabric.invoke('a', `write ${path} #!/bin/sh`);
        assert.equal(result.success, false);
        assert.match(result.error ?? '', /^write refused: /);
        assert.match(result.error ?? '', reason);
        assert.deepEqual(fabric.approvals, []);
        const dir = fabric.workspaces.dir('a-0');
        assert.deepEqual(readdirSync(dir).sort(), ['.husky']);
        assert.deepEqual(readdirSync(join(dir, '.husky')), []);
      } finally {
        await fabric.close();
      }
    });
  }

  test('the path in human.approve is the path as the script wrote it, and the file written is the one the kernel reads it as', async () => {
    const fabric = startScripted(['a'], { approve: () => 'approved' });
    try {
      const result = await fabric.invoke('a', 'write ./notes//todo.txt one');
      assert.equal(result.success, true, result.error);
      assert.deepEqual(
        fabric.approvals.map(({ kind, command_or_path }) => ({ kind, command_or_path })),
        [{ kind: 'write', command_or_path: './notes//todo.txt' }],
      );
      const dir = fabric.workspaces.dir('a-0');
      assert.equal(readFileSync(join(dir, './notes//todo.txt'), 'utf8'), 'one\n');
      assert.deepEqual(readdirSync(dir), ['notes']);
      assert.deepEqual(readdirSync(join(dir, 'notes')), ['todo.txt']);
    } finally {
      await fabric.close();
    }
  });

  test('a folder that is a symbolic link inside the workspace is refused without asking: "hooks/pre-commit" is never written as .husky/pre-commit', async () => {
    // A caller can commit `hooks -> .husky` on its branch (its callee's worktree is made from it):
    // the person would approve `hooks/pre-commit`, untagged, and the file written is a git hook.
    const fabric = startScripted(['a'], { approve: () => 'approved' }, {
      seed: (dir) => {
        mkdirSync(join(dir, '.husky'));
        symlinkSync('.husky', join(dir, 'hooks'));
      },
    });
    try {
      const result = await fabric.invoke('a', 'write hooks/pre-commit #!/bin/sh');
      assert.equal(result.success, false);
      assert.equal(result.error, 'write refused: "hooks/pre-commit" goes through "hooks", a symbolic link (to ".husky"): write the path as it really is');
      assert.deepEqual(fabric.approvals, []);
      assert.deepEqual(readdirSync(join(fabric.workspaces.dir('a-0'), '.husky')), []);
    } finally {
      await fabric.close();
    }
  });
});

describe('ask', () => {
  test('answered by the root: the question with its options and the asker, the answer reported', async () => {
    const fabric = startScripted(['a'], { answer: () => 'SQLite' });
    try {
      const result = await fabric.invoke('a', 'ask Which database? | Postgres | SQLite');
      assert.equal(result.success, true, result.error);
      assert.deepEqual(fabric.questions, [
        { questions: [{ id: 'q1', question: 'Which database?', options: ['Postgres', 'SQLite'] }], asker: { agent: 'a-0', chain: ['root', 'a'] } },
      ]);
      assert.equal(result.response, 'answer: SQLite\n');
    } finally {
      await fabric.close();
    }
  });

  test("escalated: a callee's question is passed up by its caller (a step says so) and answered by the root", async () => {
    const fabric = startScripted(['a', 'b'], { answer: () => 'tabs' });
    try {
      const result = await fabric.invoke('a', 'invoke b ask Tabs or spaces?');
      assert.equal(result.success, true, result.error);
      assert.deepEqual(fabric.questions.map((q) => q.asker), [{ agent: 'b-0', chain: ['root', 'a', 'b'] }]);
      assert.equal(result.response, 'answer: tabs\n');
      assert.ok(steps(result.progress).includes('b-0 asks "Tabs or spaces?": passed up'), JSON.stringify(result.progress));
    } finally {
      await fabric.close();
    }
  });

  test('with no question handler at the root, the call fails quoting the question', async () => {
    const fabric = startScripted(['a']);
    try {
      const result = await fabric.invoke('a', 'ask Which database?\nsay never');
      assert.equal(result.success, false);
      assert.match(result.error ?? '', /a-0 asked "Which database\?"/);
      assert.equal(result.response, '');
    } finally {
      await fabric.close();
    }
  });
});

describe('invoke, agents, post', () => {
  test('three levels: nested scripts with \\n and \\\\n, the deepest approval stamped with the whole chain, steps carrying the chain', async () => {
    const fabric = startScripted(['a', 'b', 'c'], { approve: () => 'approved' });
    try {
      const script = ['say in a', 'invoke b say in b\\ninvoke c say in c\\\\nstep c working\\\\nexec echo from c\\nsay b done', 'say a done'].join('\n');
      const result = await fabric.invoke('a', script);
      assert.equal(result.success, true, result.error);
      assert.equal(result.response, 'in a\nin b\nin c\nfrom c\n[exit code 0]\nb done\na done\n');
      assert.deepEqual(fabric.approvals.map((a) => a.asker), [{ agent: 'c-0', chain: ['root', 'a', 'b', 'c'] }]);
      const seen = steps(result.progress);
      for (const step of ['invoking b', 'b-0 started', 'b-0: invoking c', 'b-0: c-0 started', 'b-0: c-0: c working']) {
        assert.ok(seen.includes(step), `${step} in ${JSON.stringify(seen)}`);
      }
    } finally {
      await fabric.close();
    }
  });

  test("a callee that fails fails its caller's invoke, with the callee's response reported", async () => {
    const fabric = startScripted(['a', 'b']);
    try {
      const result = await fabric.invoke('a', 'invoke b say partial\\nfail broke\nsay never');
      assert.equal(result.success, false);
      assert.equal(result.error, 'invoke b: broke');
      assert.equal(result.response, 'partial\n');
    } finally {
      await fabric.close();
    }
  });

  test('an unknown agent: the broker refuses, the task fails naming it', async () => {
    const fabric = startScripted(['a']);
    try {
      const result = await fabric.invoke('a', 'invoke nobody say hi');
      assert.equal(result.success, false);
      assert.match(result.error ?? '', /unknown agent: nobody/);
    } finally {
      await fabric.close();
    }
  });

  test('agents: one line per agent the broker lists (a virtual agent\'s own worker is not a role, so not among them)', async () => {
    const fabric = startScripted(['a', 'b']);
    try {
      const result = await fabric.invoke('a', 'agents');
      assert.equal(result.success, true, result.error);
      assert.deepEqual(result.response.split('\n'), ['a (virtual): the a', 'b (virtual): the b', '']);
    } finally {
      await fabric.close();
    }
  });

  test('post root: the message reaches the root as it is posted; a post to no one fails the task', async () => {
    const fabric = startScripted(['a', 'b']);
    const mail: RootMessage[] = [];
    fabric.root.onMessage((message) => mail.push(message));
    try {
      const posted = await fabric.invoke('a', 'invoke b post root hello from b\nsay after');
      assert.equal(posted.success, true, posted.error);
      assert.deepEqual(mail.map(({ from, text }) => ({ from, text })), [{ from: 'b-0', text: 'hello from b' }]);
      assert.equal(posted.response, 'posted to root\nafter\n');

      const refused = await fabric.invoke('a', 'post nobody hi');
      assert.equal(refused.success, false);
      assert.match(refused.error ?? '', /^post to nobody refused: /);
    } finally {
      await fabric.close();
    }
  });

  test('post to a node on the tree: its next invoke result carries the mail', async () => {
    const fabric = startScripted(['a', 'b']);
    try {
      const result = await fabric.invoke('a', 'invoke b post a-0 note for a');
      assert.equal(result.success, true, result.error);
      assert.equal(result.response, 'posted to a-0\nmail: b-0: note for a\n');
    } finally {
      await fabric.close();
    }
  });
});

test('the bundled agents in a git repository: each worker in a worktree of its own, on its own branch', async () => {
  const repo = gitRepoOnMain(tempDir('chatty-agents-repo-'), 'hello\n');
  const workspace = await detectWorkspace(repo);
  assert.deepEqual(workspace, { kind: 'git', workspaceRoot: realpathSync(repo), baseBranch: 'main' });
  const broker = new Broker({ log: () => {}, root: { workspaceRoot: workspace.workspaceRoot, baseBranch: 'main' } });
  for (const agent of bundledAgents({ workspace })) broker.addVirtualAgent(agent.name, agent.runner, agent.card);
  const root = new RootTransport(broker);
  root.onApproval(() => 'approved');
  try {
    assert.deepEqual((await root.listAgents()).map((a) => a.name), ['local-coder', 'local-reviewer']);
    const result = await root.invoke('local-coder', 'exec pwd; git rev-parse --abbrev-ref HEAD; cat README\ninvoke local-reviewer exec git rev-parse --abbrev-ref HEAD');
    assert.equal(result.success, true, result.error);
    const common = realpathSync(join(repo, '.git'));
    assert.equal(
      result.response,
      `${join(common, 'chatty-worktrees', 'local-coder-0')}\nchatty/local-coder-0\nhello\n[exit code 0]\nchatty/local-reviewer-0\n[exit code 0]\n`,
    );
  } finally {
    await broker.stop();
    rmSync(repo, { recursive: true, force: true });
  }
  assert.deepEqual(await detectWorkspace(outside), { kind: 'directory', workspaceRoot: outside });
});
