/**
 * Answers to a non-reading caller's calls to virtual agents. Each callee's worker slot is kept until
 * its answer is queued for the caller (as a participant's reading is held until then): so the
 * answers waiting for deaf callers are bounded by the worker caps. Before, the slot was given back
 * once the callee's worker was reaped, before its answer was made, and the next deaf caller's
 * callees took it while the first one's answers still waited: with maxWorkers M, one root call
 * after another piled up (M-1) + (M-2) + ... answers of up to a frame each. Real children
 * (children/greedy-boss.ts: calls M-1 talkers, reads their text, then stops reading for good).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { LocalRunner } from '../../main/broker/runners/index.js';
import { startBroker, until, plan } from './helpers.js';

const BOSS = fileURLToPath(new URL('./children/greedy-boss.ts', import.meta.url));
const MAX_WORKERS = 6;

test('answers waiting for deaf callers of virtual agents stay within the worker caps the docs name', { timeout: 300_000 }, async () => {
  const marks = mkdtempSync(join(tmpdir(), 'chatty-boss-'));
  const t = startBroker(['talker'], { maxWorkers: MAX_WORKERS, maxWorkersPerTask: MAX_WORKERS });
  const env = {
    ...process.env,
    CHATTY_BOSS_CALLS: String(MAX_WORKERS - 1),
    CHATTY_BOSS_CALLEE: 'talker',
    CHATTY_BOSS_PROMPT: plan({ chunks: { count: 1, size: 1_572_864 } }), // 3 MiB of text each
    CHATTY_BOSS_MARKS: marks,
  };
  t.broker.addVirtualAgent('boss', new LocalRunner({ command: process.execPath, args: ['--import', 'tsx', BOSS], env, reapGraceMs: 1_000 }));
  const bosses = () => t.broker.registry.list().filter((p) => p.node.name.startsWith('boss'));
  // Each boss's calls all answered or waiting (its in-flight table empty), its reading stopped.
  const settled = (n: number) =>
    readdirSync(marks).length >= n && t.alive().length === 0 && bosses().every((p) => (p.connection as unknown as { calls: { size: number } }).calls.size === 0);
  try {
    for (let i = 1; i < MAX_WORKERS; i++) {
      let refused = false;
      t.broker.invokeFromRoot('boss', 'go').then(
        (r) => void (refused = r.success === false && bosses().length < i),
        () => void (refused = true),
      );
      await until(() => refused || settled(i), `root call ${i}: its boss's calls answered, or the call refused`);
      if (refused) break;
    }
    const waiting = bosses().map((p) => p.connection.outbound.waiters);
    const held = bosses().reduce((sum, p) => sum + p.connection.outbound.heldBytes, 0);
    const total = waiting.reduce((a, b) => a + b, 0);
    assert.ok(total <= MAX_WORKERS, `${total} answers wait for deaf callers (${waiting.join(' + ')}; ${(held / 2 ** 20).toFixed(0)} MiB), over maxWorkers ${MAX_WORKERS}`);
  } finally {
    await t.close();
    rmSync(marks, { recursive: true, force: true });
  }
});
