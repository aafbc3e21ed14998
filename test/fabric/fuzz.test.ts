/** A short fuzz run of the codec pair on every test run; `npm run fuzz` runs it for longer. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { it } from 'node:test';
import { runCodecFuzz } from './fuzz-properties.js';

it('fuzz: random and mutated frames in both directions never throw, and decode, drop or close', () => {
  assert.equal(runCodecFuzz({ numRuns: 400 }).numRuns, 400);
});

const script = fileURLToPath(new URL('./fuzz-run.ts', import.meta.url));
const fuzz = (...args: string[]) => promisify(execFile)(process.execPath, ['--import', 'tsx', script, ...args]);

it('npm run fuzz takes its run length as a flag, and refuses a flag it does not know', async () => {
  const { stdout } = await fuzz('--runs', '37', '--seed', '5');
  assert.match(stdout, /^fuzz: 37 runs, no failure in [\d.]+ s \(seed 5\)$/m);
  await assert.rejects(fuzz('--minutes', '3'), (err: { code?: number; stderr?: string }) => err.code === 2 && /usage: npm run fuzz/.test(err.stderr ?? ''));
});
