/**
 * approvals.log could be flooded: each human.approve is one row, its command up to 16 Ki
 * characters, a control character written as `\u0001` (6 bytes): ~96 KiB a row. Calls decided at
 * once (here a deny rule) cost the worker only its call rate, so one connection appended ~1 MB a
 * second (30 calls: 2.96 MB). A row now holds at most AUDIT_TEXT_CHARS of the text and names the
 * whole by its length and SHA-256: every decision is still one row naming exactly what was decided.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { AUDIT_TEXT_CHARS, auditLine } from '../../main/broker/approvals/audit-log.js';
import { plan, startBroker } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'approval-audit-flood-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Asks each of `commands` of a worker under a deny rule on them (decided at once) and returns approvals.log's text and size. */
async function deniedRows(file: string, commands: readonly string[]): Promise<{ text: string; bytes: number }> {
  const t = startBroker(['coder']);
  const path = join(dir, file);
  t.broker.human.audit.writeTo(path);
  try {
    t.broker.human.rules.add({ effect: 'deny', kind: 'exec', agent: '*', match: { prefix: 'x' } });
    await t.root.invoke('coder', plan({ seq: commands.map((command) => ({ approve: { kind: 'exec', command_or_path: command } })) }));
    return { text: readFileSync(path, 'utf8'), bytes: statSync(path).size };
  } finally {
    await t.close();
  }
}

it('a burst of denied approvals of long texts appends bounded rows, each naming exactly what was decided', { timeout: 180_000 }, async () => {
  const commands = Array.from({ length: 30 }, (_, i) => `x ${'\u0001'.repeat(16 * 1024 - 10)}${String(i).padStart(8, '0')}`);
  const { text, bytes } = await deniedRows('approvals.log', commands);
  assert.ok(bytes < 30 * 4 * 1024, `approvals.log holds ${bytes} bytes after 30 calls`);
  const rows = text.trimEnd().split('\n').map((line) => JSON.parse(line) as { command_or_path: string; cut?: { chars: number; sha256: string }; verdict: string });
  assert.equal(rows.length, 30, 'one row per decision');
  rows.forEach((row, i) => {
    const whole = commands[i]!;
    assert.equal(row.verdict, 'denied');
    assert.equal(row.command_or_path, whole.slice(0, AUDIT_TEXT_CHARS));
    assert.deepEqual(row.cut, { chars: whole.length, sha256: createHash('sha256').update(whole, 'utf8').digest('hex') });
  });
});

it('a short text is written whole, with no cut', { timeout: 180_000 }, async () => {
  const command = `x ${'a'.repeat(AUDIT_TEXT_CHARS - 2)}`;
  const row = JSON.parse((await deniedRows('short.log', [command])).text.trim()) as { command_or_path: string; cut?: unknown };
  assert.equal(row.command_or_path, command);
  assert.equal(row.cut, undefined);
});

/**
 * The cut's SHA-256 was of Node's UTF-8, which writes every lone surrogate as U+FFFD: two
 * commands differing in one lone surrogate past the cut had the same row. A lone surrogate is now
 * hashed as its own three bytes (WTF-8); a well-formed text's hash is its UTF-8's, as before.
 */
it('a cut row names the whole text exactly, lone surrogates too', () => {
  const row = (text: string): { cut: { chars: number; sha256: string } } => JSON.parse(auditLine({ time: 't', agent: 'a', role: 'r', chain: [], kind: 'exec', command_or_path: text, danger: [], verdict: 'denied', by: 'limit' }));
  const long = 'x'.repeat(AUDIT_TEXT_CHARS + 10);
  assert.notEqual(row(`${long}\ud800`).cut.sha256, row(`${long}\ud801`).cut.sha256);
  assert.notEqual(row(`${long}\udc00`).cut.sha256, row(`${long}\ufffd`).cut.sha256);
  assert.equal(row(`${long}\ud800`).cut.sha256, createHash('sha256').update(Buffer.concat([Buffer.from(long), Buffer.from([0xed, 0xa0, 0x80])])).digest('hex'));
  const emoji = `${long}\u{1f600}`;
  assert.equal(row(emoji).cut.sha256, createHash('sha256').update(emoji, 'utf8').digest('hex'));
});
