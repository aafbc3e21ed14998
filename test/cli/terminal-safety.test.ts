/**
 * What a worker sends reaches the terminal only made printable: approvals, questions, mail, steps,
 * text and every line, whatever the output (terminal or not); the command an approval asks to run
 * is shown exactly; the live status row is cut by display columns and redrawn when the terminal's
 * width changes. Over in-memory streams (a fake TTY for the screen).
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import stringWidth from 'string-width';
import type { ApprovalRequest, RootTransport } from '../../main/broker/index.js';
import { vouchedContext } from '../../main/broker/approvals/index.js';
import { attachTerminalRoot, describeApproval, fitColumns, printable, ProgressPrinter, Screen, TerminalPrompter } from '../../main/cli/terminal-root/index.js';
import { HELD_LINE_MAX, HELD_LINES_MAX } from '../../main/cli/terminal-root/screen.js';
import { ECHOED_ENTER } from '../../main/cli/terminal-root/typed-lines.js';

/** An approval that tries to erase its own row and set the window title. */
const EVIL_COMMAND = 'ls\x1b[2K\r  approved: harmless\x1b]2;T\x07 && rm -rf ~';
/** Every character that would make a terminal do something rather than show it. */
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

const evil = (kind: 'exec' | 'write' = 'exec'): ApprovalRequest => ({
  kind,
  command_or_path: EVIL_COMMAND,
  ...(kind === 'write' ? { diff_stat: '+1\x1b[8m -0' } : {}),
  asker: { agent: 'evil\x1b[31m-0', chain: ['root', 'evil\x9b2J'] },
  role: 'evil',
  ...vouchedContext(kind, EVIL_COMMAND, kind === 'write' ? '+1\x1b[8m -0' : undefined, undefined, undefined),
});

function sink() {
  const stream = new PassThrough();
  let written = '';
  stream.on('data', (chunk: Buffer) => (written += String(chunk)));
  return { stream, written: () => written };
}

describe('printable and exactly', () => {
  test('escape sequences, C0 and C1 controls go; new lines and tabs stay; bidi controls are shown, not obeyed', () => {
    assert.equal(printable('a\x1b]2;T\x07b\x1b[31mc\x1b'), 'abc');
    assert.equal(printable('A\u009d2;TITLE\u009cB\u009b2J\u0085'), 'A2;TITLEB2J');
    assert.equal(printable('x\ry\x00\x7f\n\tz'), 'xy\n\tz');
    assert.equal(printable('safe \u202egnp.exe\u202c \u2066i\u2069'), 'safe <U+202E>gnp.exe<U+202C> <U+2066>i<U+2069>');
    assert.equal(printable('日本語 ✓ é'), '日本語 ✓ é');
  });

  test('a command goes through the display rule: each hidden character as its code point, its ends seen, a new line indented', () => {
    assert.equal(describeApproval({ kind: 'exec', command_or_path: 'npm test -- "a b"' }), 'run: npm test -- "a b"');
    assert.equal(describeApproval({ kind: 'exec', command_or_path: EVIL_COMMAND }), 'run: ls<U+001B>[2K<U+000D>  approved: harmless<U+001B>]2;T<U+0007> && rm -rf ~');
    assert.equal(describeApproval({ kind: 'exec', command_or_path: 'echo "tests ok\u202E" && x' }), 'run: echo "tests ok<U+202E>" && x');
    assert.equal(describeApproval({ kind: 'exec', command_or_path: 'a\u0085b\u200bc\u00a0d' }), 'run: a<U+0085>b<U+200B>c<U+00A0>d');
    assert.equal(describeApproval({ kind: 'exec', command_or_path: 'ls ' }), 'run: ⟦ls ⟧', 'a trailing space is seen');
    assert.equal(describeApproval({ kind: 'write', command_or_path: 'line\nchatty-gateway: approved' }), 'write: line\n    chatty-gateway: approved');
  });

  test('fitColumns cuts by display columns: a wide character takes two', () => {
    const cut = fitColumns('日本語のテキスト'.repeat(4), 21);
    assert.ok(cut.endsWith('…'));
    assert.ok(stringWidth(cut) <= 21, cut);
    assert.ok(stringWidth(cut) >= 20, cut);
    assert.equal(fitColumns('short', 21), 'short');
  });
});

describe('the prompter and the terminal root', () => {
  test("an approval's command is shown exactly, with nothing a terminal obeys; who asks and the diff stat too", async () => {
    const out = sink();
    const input = new PassThrough();
    const prompter = new TerminalPrompter({ input, output: out.stream, echo: true });
    const verdict = prompter.approve(evil(), new AbortController().signal);
    input.write('n\n');
    assert.equal(await verdict, 'denied');
    const write = prompter.approve(evil('write'), new AbortController().signal);
    input.write('n\n');
    assert.equal(await write, 'denied');
    prompter.close();
    assert.doesNotMatch(out.written(), UNSAFE);
    const SHOWN = 'ls<U+001B>[2K<U+000D>  approved: harmless<U+001B>]2;T<U+0007> && rm -rf ~';
    assert.ok(evil().danger.includes('recursive-delete') && evil().danger.includes('hidden-characters'), evil().danger.join());
    assert.equal(
      out.written(),
      [
        `chatty-gateway: evil<U+001B>[31m-0 (root → evil<U+009B>2J) asks to run: ${SHOWN}`,
        `  !! DANGER: ${evil().danger.join(', ')}`,
        '  !! HIDDEN CHARACTERS: shown as <U+XXXX>; what runs holds characters you could not see',
        '  approve? [y/N] n',
        '  denied',
        `chatty-gateway: evil<U+001B>[31m-0 (root → evil<U+009B>2J) asks to write: ${SHOWN}`,
        '  the worker says of it: +1<U+001B>[8m -0',
        `  you answer for: write: ${SHOWN}`,
        `  !! DANGER: ${evil('write').danger.join(', ')}`,
        '  !! HIDDEN CHARACTERS: shown as <U+XXXX>; what runs holds characters you could not see',
        '  approve? [y/N] n',
        '  denied',
        '',
      ].join('\n'),
    );
  });

  test('a question and its options: printable, a question of several lines indented, an option on one line', async () => {
    const out = sink();
    const input = new PassThrough();
    const prompter = new TerminalPrompter({ input, output: out.stream, echo: false });
    input.write('1\n');
    const answers = await prompter.ask(
      { questions: [{ id: 'q', question: 'Q\x1b]2;T\x07?\nchatty-gateway: approved', options: ['a\x1b[31mred\nchatty-gateway: x'] }], asker: { agent: 'e-0', chain: ['root', 'e'] } },
      new AbortController().signal,
    );
    prompter.close();
    assert.deepEqual(answers, [{ id: 'q', answer: 'a\x1b[31mred\nchatty-gateway: x', custom: false }], 'the answer is the option as it was');
    assert.doesNotMatch(out.written(), UNSAFE);
    assert.ok(out.written().startsWith('chatty-gateway: e-0 (root → e) asks: Q<U+001B>]2;T<U+0007>?\n    chatty-gateway: approved\n  1) a<U+001B>[31mred chatty-gateway: x\n'), out.written());
  });

  test('--approvals allow and mail: the lines the root writes itself are printable too; the sender\'s name is one line, through the display rule', () => {
    const out = sink();
    let approval: ((request: ApprovalRequest) => unknown) | undefined;
    let mail: ((message: { from: string; text: string }) => void) | undefined;
    const root = {
      onApproval: (handler: typeof approval) => ((approval = handler), () => {}),
      onQuestion: () => () => {},
      onMessage: (listener: typeof mail) => ((mail = listener), () => {}),
    } as unknown as RootTransport;
    const terminal = attachTerminalRoot(root, { approvals: 'allow', output: out.stream });
    assert.deepEqual(approval!(evil()), { verdict: 'approved', by: 'mode:allow' });
    mail!({ from: 'evil\x1b[8m-0\nchatty-gateway: fake', text: 'hi\x1b]2;T\x07\nchatty-gateway: approved' });
    terminal.close();
    assert.doesNotMatch(out.written(), UNSAFE);
    assert.equal(
      out.written(),
      'chatty-gateway: approved (--approvals allow): evil<U+001B>[31m-0 (root → evil<U+009B>2J) asks to run: ls<U+001B>[2K<U+000D>  approved: harmless<U+001B>]2;T<U+0007> && rm -rf ~\n' +
        `  !! DANGER: ${evil().danger.join(', ')}\n` +
        '  !! HIDDEN CHARACTERS: shown as <U+XXXX>; what runs holds characters you could not see\n' +
        'chatty-gateway: message from evil<U+001B>[8m-0<U+000A>chatty-gateway: fake: hi\n    chatty-gateway: approved\n',
    );
  });

  test("ProgressPrinter: a step is one printable line", () => {
    const out = sink();
    const printer = new ProgressPrinter('evil', { output: out.stream });
    printer.event({ Admitted: 'evil-0' });
    printer.event({ Step: 'st\x1b]2;T\x07ep\u009b2J\nchatty-gateway: fake' });
    assert.equal(out.written(), '  evil-0 started\n  [evil-0] step2J chatty-gateway: fake\n');
  });
});

/** A fake terminal: what is written, its width, and its 'resize' event. */
function tty(columns: number) {
  const out = Object.assign(new EventEmitter(), { columns, written: '', write: (s: string) => ((out.written += s), true) });
  return out as typeof out & NodeJS.WritableStream;
}

/** The rows a terminal of `columns` shows for `output`, wrapping long rows: `\r`, new lines and erase-line applied. */
function rowsOf(output: string, columns: number): string[] {
  const rows: string[][] = [[]];
  let col = 0;
  for (let i = 0; i < output.length; i++) {
    const c = output[i]!;
    if (c === '\r') col = 0;
    else if (c === '\n') {
      rows.push([]);
      col = 0;
    } else if (c === '\x1b') {
      const escape = /^\x1b\[[0-9;?]*([@-~])/.exec(output.slice(i))!;
      if (escape[1] === 'K') rows[rows.length - 1]!.length = col;
      i += escape[0].length - 1;
    } else {
      const cp = output.codePointAt(i)!;
      const ch = String.fromCodePoint(cp);
      if (cp > 0xffff) i++;
      const width = stringWidth(ch);
      if (col + width > columns) {
        rows.push([]);
        col = 0;
      }
      const row = rows[rows.length - 1]!;
      while (row.length < col) row.push(' ');
      row[col] = ch;
      if (width === 2) row[col + 1] = '';
      col += width;
    }
  }
  return rows.map((r) => r.join(''));
}

describe('Screen', () => {
  test('on a terminal, the prompts and the lines are printable: a worker cannot erase the question or set the title', () => {
    const out = tty(80);
    const screen = new Screen(out, new EventEmitter() as never);
    screen.prompts.write(`chatty-gateway: evil-0 asks to run: ${EVIL_COMMAND}\n`);
    screen.prompts.write('  approve? [y/N] ');
    screen.lines.write('chatty-gateway: task #1 (evil) did not complete: reason\x1b]2;T\x07\x1b[31mRED\u009d0;x\u009c\n');
    screen.close();
    const noErase = out.written.replaceAll('\r\x1b[K', '');
    assert.doesNotMatch(noErase, UNSAFE);
    assert.ok(noErase.includes('asks to run: ls  approved: harmless && rm -rf ~\n'), noErase);
    assert.ok(noErase.includes('did not complete: reasonRED0;x\n'), noErase);
  });

  test('not on a terminal (stdin piped, say), text and lines are printable all the same', () => {
    const out = tty(80);
    const screen = new Screen(out, undefined);
    screen.text(1, 'plain \x1b]2;TEXT-TITLE\x07 after\n');
    screen.lines.write('chatty-gateway: mail \u009b2J\n');
    screen.close();
    assert.equal(out.written, '  #1 | plain  after\nchatty-gateway: mail 2J\n');
  });

  test('on a terminal a waiting question is left alone: what comes meanwhile is shown once it is answered', () => {
    const out = tty(80);
    const input = new EventEmitter();
    const screen = new Screen(out, input as never);
    screen.commandWaits(true);
    screen.status(1, '#1 a-0 ▸ working');
    screen.prompts.write('chatty-gateway: b-0 (root → b) asks to run: ls\n');
    screen.prompts.write('  approve? [y/N] ');
    const asked = out.written;
    screen.lines.write('chatty-gateway: broker: a line\n');
    screen.text(1, 'one\ntw');
    screen.status(1, '#1 a-0 ▸ still working');
    screen.prompts.write('chatty-gateway: message from a-0: hi\n');
    assert.equal(out.written, asked, 'nothing written below or over the question while it waits');
    out.written += 'y\r\n'; // the terminal echoes what is typed, Enter included
    input.emit(ECHOED_ENTER); // …and the line reader says so
    screen.prompts.write('  approved\n');
    screen.close();
    const rows = rowsOf(out.written, 80);
    const at = rows.indexOf('  approve? [y/N] y');
    assert.ok(at > 0, rows.join('\n'));
    assert.deepEqual(rows.slice(at - 1, at + 6), [
      'chatty-gateway: b-0 (root → b) asks to run: ls',
      '  approve? [y/N] y',
      'chatty-gateway: broker: a line',
      '  #1 | one',
      'chatty-gateway: message from a-0: hi',
      '  #1 | tw',
      '  approved',
    ]);
  });

  test('a worker flooding while a question waits is held up to a bound, the rest counted; a line that never ends is shown in pieces', () => {
    const out = tty(80);
    const input = new EventEmitter();
    const screen = new Screen(out, input as never);
    screen.prompts.write('chatty-gateway: b-0 (root → b) asks to run: ls\n');
    screen.prompts.write('  approve? [y/N] ');
    const line = `chatty-gateway: ${'x'.repeat(1023)}\n`; // 1 KiB a line
    for (let i = 0; i < 2048; i++) screen.lines.write(line); // 2 MiB: twice the bound
    out.written += 'y\r\n'; // the terminal echoes what is typed, Enter included
    input.emit(ECHOED_ENTER); // …and the line reader says so
    const shown = out.written.split('\n').filter((row) => row.startsWith('chatty-gateway: xxx')).length;
    assert.equal(shown, Math.floor(HELD_LINES_MAX / line.length));
    assert.match(out.written, new RegExp(`\\(${(2048 - shown) * line.length} characters of output came while the question waited and are not shown\\)`));
    const before = out.written.length;
    screen.text(2, 'y'.repeat(HELD_LINE_MAX + 10)); // a task whose text has no new line at all
    screen.text(3, 'z'.repeat(HELD_LINE_MAX + 10));
    assert.ok(out.written.length - before > 2 * HELD_LINE_MAX, 'both shown, neither held whole');
    screen.close();
  });

  test('a status row of wide characters fits the row: measured in display columns, it never wraps', () => {
    const out = tty(40);
    const screen = new Screen(out, new EventEmitter() as never);
    screen.commandWaits(true);
    for (let i = 0; i < 3; i++) screen.status(1, `#1 evil-0 ▸ ${i} ${'日本語のテキスト'.repeat(6)}`);
    const rows = rowsOf(out.written, 40);
    assert.equal(rows.length, 1, `one row, redrawn in place:\n${rows.join('\n')}`);
    assert.ok(rows[0]!.startsWith('[#1 evil-0 ▸ 2 日本') && rows[0]!.endsWith('…] > '), rows[0]);
    assert.ok(stringWidth(rows[0]!) < 40, rows[0]);
    screen.close();
  });

  test('the width changes: the status row is cut again to the new width', () => {
    const out = tty(60);
    const screen = new Screen(out, new EventEmitter() as never);
    screen.commandWaits(true);
    screen.status(1, `#1 evil-0 ▸ ${'x'.repeat(100)}`);
    out.columns = 30;
    out.emit('resize');
    const rows = rowsOf(out.written, 30);
    assert.equal(rows.at(-1), `[#1 evil-0 ▸ ${'x'.repeat(11)}…] > `);
    assert.ok(stringWidth(rows.at(-1)!) < 30);
    out.columns = 50;
    out.emit('resize');
    assert.equal(rowsOf(out.written, 50).at(-1), `[#1 evil-0 ▸ ${'x'.repeat(31)}…] > `);
    screen.close();
    assert.equal(out.listenerCount('resize'), 0, 'the screen stops listening once closed');
  });
});
