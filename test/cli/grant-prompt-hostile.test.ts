/**
 * A hostile plugin's capability request at the terminal prompt (issue 20 item 3): the author
 * writes the version, and may ask for thousands of hosts. What is on the screen right above
 * `grant? [y/N]` must say whose build it is and how much a `y` grants, and a network ask must
 * read as what it reaches.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import { TerminalPrompter } from '../../main/cli/terminal-root/index.js';
import type { CapabilityAsk, PluginGrantRequest } from '../../main/plugins/grants/index.js';
import { GRANT_DIGEST, grantRequest } from '../helpers/grant-request.js';

/** Shows `request` at a prompter over in-memory streams, answers `n`, and returns the screen's lines. */
async function screenOf(overrides: Partial<Omit<PluginGrantRequest, 'id'>>): Promise<string[]> {
  const input = new PassThrough();
  const output = new PassThrough();
  let text = '';
  output.on('data', (chunk: Buffer) => (text += String(chunk)));
  const prompter = new TerminalPrompter({ input, output, echo: true });
  const decision = prompter.grant({ id: 'grant-1', ...grantRequest(overrides) }, new AbortController().signal);
  while (!text.includes('grant? [y/N] ')) await new Promise((resolve) => output.once('data', resolve));
  input.write('n\n');
  assert.equal(await decision, 'denied');
  prompter.close();
  return text.split('\n');
}

describe('a hostile grant request at the terminal prompt', () => {
  test('a network ask says what it reaches (a "*." entry any name under it, not the name itself; no port, 80 and 443 only), and the folder its ./ is in is shown', async () => {
    const asks: CapabilityAsk[] = [
      { capability: 'network', detail: '*.example.org' },
      { capability: 'network', detail: 'api.example.com' },
      { capability: 'network', detail: 'api.github.com:443' },
    ];
    const lines = await screenOf({ asks, dir: '/home/me/plugins/text-tools' });
    assert.deepEqual(lines.slice(1, 6), [
      '    network: *.example.org (any name under example.org, not example.org itself; ports 80 and 443 only)',
      '    network: api.example.com (ports 80 and 443 only)',
      '    network: api.github.com:443',
      `  digest: ${GRANT_DIGEST}`,
      '  folder: /home/me/plugins/text-tools',
    ]);
  });

  test('thousands of asks: the line right above the prompt names the plugin, its short digest and how many asks a y grants', async () => {
    const asks: CapabilityAsk[] = [{ capability: 'file', detail: 'read files under ./data' }];
    for (let i = 0; i < 2000; i++) asks.push({ capability: 'network', detail: `h${i}.example.org:443` });
    const lines = await screenOf({ asks });
    const prompt = lines.findIndex((line) => line.startsWith('  grant? [y/N] '));
    assert.equal(lines[prompt - 1], '  text-tools (sha256:ab12cd34ef56…) asks for 2,001 things in all (file: 1, network: 2,000): y grants every one');
  });

  test('a version that is not a plain token is shown between ⟦ ⟧ and cut on the first line (whole on a line of its own), so it cannot pass for the digest', async () => {
    const spoof = `0.3.1 (sha256:ab12cd34ef56…) ${'x'.repeat(300)}`;
    const lines = await screenOf({ version: spoof });
    assert.match(lines[0]!, /^chatty-gateway: plugin text-tools ⟦0\.3\.1 \(sha256:ab12cd34ef56…\) x+…⟧ \(sha256:ab12cd34ef56…\) asks for:$/);
    assert.ok(lines[0]!.length < 120, `the first line stays short: ${lines[0]!.length} characters`);
    assert.ok(lines.includes(`  version: ⟦${spoof}⟧`), 'the whole version is on a line of its own');
  });
});
