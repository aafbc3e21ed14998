/**
 * The long fuzz run: `npm run fuzz -- --runs 100000` or `npm run fuzz -- --seconds 600`
 * (default: 60 seconds), `--seed S` to replay. Prints the runs made and the seed; on a failure,
 * fast-check's report (seed, path and counterexample) and exit code 1.
 */
import { runCodecFuzz } from './fuzz-properties.js';

const FLAGS = new Set(['runs', 'seconds', 'seed']);
const values = new Map<string, number>();
for (let at = 2; at < process.argv.length; at += 2) {
  const name = process.argv[at]!.replace(/^--/, '');
  const value = Number(process.argv[at + 1]);
  if (!process.argv[at]!.startsWith('--') || !FLAGS.has(name) || !Number.isInteger(value) || (name !== 'seed' && value <= 0)) {
    console.error(`usage: npm run fuzz -- [--runs N] [--seconds N] [--seed S]  (not understood: ${process.argv.slice(at, at + 2).join(' ')})`);
    process.exit(2);
  }
  values.set(name, value);
}
const runs = values.get('runs');
const seconds = values.get('seconds') ?? (runs === undefined ? 60 : undefined);
const seed = values.get('seed');

const started = performance.now();
const details = runCodecFuzz({
  numRuns: runs ?? Number.MAX_SAFE_INTEGER,
  ...(seconds !== undefined ? { interruptAfterTimeLimit: seconds * 1000, markInterruptAsFailure: false } : {}),
  ...(seed !== undefined ? { seed } : {}),
});
const elapsed = ((performance.now() - started) / 1000).toFixed(1);
console.log(`fuzz: ${details.numRuns} runs, no failure in ${elapsed} s (seed ${details.seed})`);
