/**
 * A plugin's capability request at the terminal root (issue 20 item 3): the real grant desk
 * (`PluginGrants`) answered by `attachTerminalRoot` over in-memory streams (a stand-in TTY for raw
 * mode): what the prompt shows, how it is read, the modes, the turn it takes with approvals.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import type { ApprovalRequest } from '../../main/broker/index.js';
import { vouchedContext } from '../../main/broker/approvals/index.js';
import { attachTerminalRoot, LineQueue, TerminalPrompter } from '../../main/cli/terminal-root/index.js';
import { ProtocolGateway } from '../../main/gateway/index.js';
import { PluginGrants } from '../../main/plugins/grants/index.js';
import { GRANT_DIGEST, grantRequest } from '../helpers/grant-request.js';

const ASK = grantRequest();
const DIGEST = GRANT_DIGEST;
/** Every character that would make a terminal do something rather than show it. */
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

function screen() {
  const output = new PassThrough();
  let text = '';
  output.on('data', (chunk: Buffer) => (text += String(chunk)));
  /** Resolves once the screen shows `needle` `times` times. */
  const shows = async (needle: string, times = 1): Promise<void> => {
    while (text.split(needle).length - 1 < times) await new Promise((resolve) => output.once('data', resolve));
  };
  return { output, text: () => text, shows };
}

/** The root of a gateway that is not started: its approval handler is what the terminal root sets. */
const rootOf = () => new ProtocolGateway({ list: () => [] }).transport();

/** A terminal root in `prompt` mode answering a fresh desk, over in-memory input and screen. */
function prompting(grantCommand?: (plugin: string) => string) {
  const s = screen();
  const input = new PassThrough();
  const desk = new PluginGrants();
  const terminal = attachTerminalRoot(rootOf(), { approvals: 'prompt', input, output: s.output, grants: desk, grantCommand });
  return { s, input, desk, terminal };
}

describe('the grant prompt', () => {
  test('shows the plugin, its version, a short digest and each ask on its own line, then the whole digest; y grants, and the desk hears it', async () => {
    const { s, input, desk, terminal } = prompting();
    const outcome = desk.ask(ASK);
    await s.shows('  grant? [y/N] ');
    input.write('y\n');
    assert.equal(await outcome, 'granted');
    assert.equal(
      s.text(),
      [
        'chatty-gateway: plugin text-tools 0.3.1 (sha256:ab12cd34ef56…) asks for:',
        '    file: read files under ~/notes',
        '    network: api.github.com:443',
        `  digest: ${DIGEST}`,
        '  grant? [y/N] y',
        '  granted',
        '',
      ].join('\n'),
    );
    terminal.close();
  });

  test('a denial says the grant command the embedder gives (serve: with its own --modules-dir and --approvals-file)', async () => {
    const { s, input, desk, terminal } = prompting((plugin) => `chatty-gateway plugin grant ${plugin} --modules-dir /srv/plugins`);
    const outcome = desk.ask(ASK);
    await s.shows('  grant? [y/N] ');
    input.write('n\n');
    assert.equal(await outcome, 'denied');
    assert.ok(s.text().includes('  denied (grant it later with: chatty-gateway plugin grant text-tools --modules-dir /srv/plugins)\n'), s.text());
    terminal.close();
  });

  test('n, an empty line or the end of input deny (saying how to grant it later); anything else asks again', async () => {
    const { s, input, desk, terminal } = prompting();
    const first = desk.ask(ASK);
    const second = desk.ask({ ...ASK, plugin: 'other' });
    const third = desk.ask({ ...ASK, plugin: 'third' });
    await s.shows('  grant? [y/N] ');
    assert.ok(!s.text().includes('other'), 'the second waits its turn');
    input.write('maybe\nno\n\n');
    assert.equal(await first, 'denied');
    assert.equal(await second, 'denied');
    await s.shows('  grant? [y/N] ', 4);
    input.end();
    assert.equal(await third, 'denied');
    const text = s.text();
    assert.ok(text.includes('  grant? [y/N] maybe\n  please answer y or n\n  grant? [y/N] no\n  denied (grant it later with: chatty-gateway plugin grant text-tools)\n'), text);
    assert.ok(text.includes('  denied (grant it later with: chatty-gateway plugin grant other)\n'), text);
    assert.ok(text.endsWith('  grant? [y/N] \n  (no answer: the input ended) denied\n'), text);
    terminal.close();
  });

  test('every field through the display rule: hidden characters as code points with a warning, a new line cannot forge a line, nothing the terminal obeys', async () => {
    const { s, input, desk, terminal } = prompting();
    const outcome = desk.ask(
      grantRequest({
        plugin: 'text\u202Eslooт',
        version: '0.3.1\x1b[2K',
        asks: [
          { capability: 'file', detail: 'read files under ./data\nchatty-gateway: granted' },
          { capability: 'network', detail: 'api.github.com\u200B:443' },
        ],
      }),
    );
    await s.shows('  grant? [y/N] ');
    input.write('n\n');
    assert.equal(await outcome, 'denied');
    terminal.close();
    const text = s.text();
    assert.doesNotMatch(text, UNSAFE);
    // The Cyrillic т in a word of Latin letters is a look-alike: shown as its code point too.
    assert.ok(text.startsWith('chatty-gateway: plugin text<U+202E>sloo<U+0442> ⟦0.3.1<U+001B>[2K⟧ (sha256:ab12cd34ef56…) asks for:\n'), text);
    assert.ok(text.includes('    file: read files under ./data<U+000A>chatty-gateway: granted\n'), text);
    assert.ok(text.includes('    network: api.github.com<U+200B>:443\n'), text);
    assert.ok(text.includes("  !! HIDDEN CHARACTERS: shown as <U+XXXX>; the plugin's request holds characters you could not see\n"), text);
  });

  test('it takes its turn with the approvals: shown once the approval on the screen is answered, read the same way', async () => {
    const s = screen();
    const input = new PassThrough();
    const prompter = new TerminalPrompter({ input, output: s.output, echo: true });
    const command = 'npm test';
    const request: ApprovalRequest = { kind: 'exec', command_or_path: command, asker: { agent: 'local-coder-0', chain: ['root', 'local-coder'] }, role: 'local-coder', ...vouchedContext('exec', command, undefined, undefined, undefined) };
    const approval = prompter.approve(request, new AbortController().signal);
    const grant = prompter.grant({ ...ASK, id: 'grant-1' }, new AbortController().signal);
    await s.shows('approve? [y/N] ');
    assert.ok(!s.text().includes('text-tools'), 'the grant waits for the approval on the screen');
    input.write('y\n');
    assert.equal(await approval, 'approved');
    await s.shows('  grant? [y/N] ');
    input.write('yes\n');
    assert.equal(await grant, 'granted');
    prompter.close();
  });

  test('withdrawn while shown (the module unloaded): said so, and the next request gets the next line', async () => {
    const { s, input, desk, terminal } = prompting();
    const unloaded = new AbortController();
    const first = desk.ask(ASK, unloaded.signal);
    const second = desk.ask({ ...ASK, plugin: 'second' });
    await s.shows('  grant? [y/N] ');
    unloaded.abort();
    assert.equal(await first, 'withdrawn');
    await s.shows('  grant? [y/N] ', 2);
    input.write('y\n');
    assert.equal(await second, 'granted');
    assert.ok(s.text().includes('  grant? [y/N] \n  (withdrawn: the plugin no longer waits for this grant)\n  !! the request above was withdrawn: the one below is another request (its answer waits 3 guard times)\nchatty-gateway: plugin second 0.3.1'), s.text());
    terminal.close();
  });

  test('closing the terminal root hands a request it had not answered back to the desk, for the next handler', async () => {
    const { s, input, desk, terminal } = prompting();
    const outcome = desk.ask(ASK);
    await s.shows('  grant? [y/N] ');
    terminal.close();
    assert.deepEqual(
      desk.waiting().map((r) => r.plugin),
      ['text-tools'],
    );
    const input2 = new PassThrough();
    const again = attachTerminalRoot(rootOf(), { approvals: 'prompt', input: input2, output: s.output, grants: desk });
    await s.shows('  grant? [y/N] ', 2);
    input2.write('y\n');
    assert.equal(await outcome, 'granted');
    again.close();
  });
});

describe('--approvals allow|deny', () => {
  test("the desk is left to the registry's own grants mode (serve sets it from --approvals): a request is not answered twice, nor shown", async () => {
    for (const mode of ['allow', 'deny'] as const) {
      const s = screen();
      const desk = new PluginGrants();
      const waiting = desk.ask(ASK);
      const terminal = attachTerminalRoot(rootOf(), { approvals: mode, output: s.output, grants: desk });
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(desk.waiting().map((r) => r.plugin), ['text-tools'], mode);
      assert.equal(s.text(), '');
      terminal.close();
      desk.withdrawAll();
      assert.equal(await waiting, 'withdrawn');
    }
  });
});

describe('on a terminal: keys read one by one (raw mode)', () => {
  /** An in-memory stream that says it is a terminal. */
  function fakeTty() {
    return Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => undefined });
  }

  test('a "y" typed before the grant prompt appeared (for the command line) is no answer to it, nor the Enter that ends it: said to be ignored', async () => {
    const s = screen();
    const input = fakeTty();
    const lines = new LineQueue(input, s.output);
    const desk = new PluginGrants();
    const terminal = attachTerminalRoot(rootOf(), { approvals: 'prompt', input, output: s.output, lines, grants: desk });
    input.write('y'); // typed for something else…
    await s.shows('y');
    const outcome = desk.ask(ASK); // …when the plugin's request appears
    await s.shows('  grant? (ignored keys typed before this prompt appeared)\n  grant? [y/N] ');
    input.write('\r');
    await s.shows('\n  (ignored keys typed before this prompt appeared)\n  grant? [y/N] ');
    input.write('n\r');
    assert.equal(await outcome, 'denied');
    terminal.close();
    lines.close();
  });
});
