/**
 * The long plugin-load fuzz run: `npm run fuzz:plugins -- --runs 2000` or `-- --seconds 600`
 * (default: 120 seconds), `--seed S` to replay, `--family mutants|headers|manifests|wat|wit|all`
 * (default all; the WAT grammar here includes start functions that never return, 10 s each),
 * `--tolerate-known` to record the known poisoned-transpiler defect and go on past it.
 * Prints the runs made, the seed and what the loads came to; on a failure, fast-check's report
 * (seed, path and the shrunk counterexample) and exit code 1. A clean run exits on its own, so a
 * worker or timer left behind shows as a run that never ends.
 */
import type fc from 'fast-check';
import {
  POISONED_TRANSPILER,
  allCases,
  headerCases,
  manifestCases,
  mutantCases,
  openHarness,
  runLoadFuzz,
  watCases,
  witCases,
  type LoadCase,
} from './load-fuzz-properties.js';

const FAMILIES: Record<string, () => fc.Arbitrary<LoadCase>> = {
  all: () => allCases({ spin: true }),
  mutants: () => mutantCases,
  headers: () => headerCases,
  manifests: () => manifestCases,
  wat: () => watCases({ spin: true }),
  wit: () => witCases,
};
const USAGE = `usage: npm run fuzz:plugins -- [--runs N] [--seconds N] [--seed S] [--family ${Object.keys(FAMILIES).join('|')}] [--tolerate-known]`;

const values = new Map<string, number>();
let family = 'all';
let tolerate = false;
for (let at = 2; at < process.argv.length; at += 2) {
  const flag = process.argv[at]!;
  if (flag === '--tolerate-known') {
    tolerate = true;
    at--;
    continue;
  }
  const raw = process.argv[at + 1];
  const name = flag.replace(/^--/, '');
  const value = Number(raw);
  const ok =
    flag.startsWith('--') &&
    (name === 'family' ? raw !== undefined && raw in FAMILIES : ['runs', 'seconds', 'seed'].includes(name) && Number.isInteger(value) && (name === 'seed' || value > 0));
  if (!ok) {
    console.error(`${USAGE}  (not understood: ${process.argv.slice(at, at + 2).join(' ')})`);
    process.exit(2);
  }
  if (name === 'family') family = raw!;
  else values.set(name, value);
}
const runs = values.get('runs');
const seconds = values.get('seconds') ?? (runs === undefined ? 120 : undefined);
const seed = values.get('seed');

const harness = await openHarness(tolerate ? { tolerate: POISONED_TRANSPILER } : {});
const started = performance.now();
let failure: unknown;
let made = 0;
let usedSeed: number | undefined = seed;
try {
  const details = await runLoadFuzz(harness, FAMILIES[family]!(), {
    numRuns: runs ?? Number.MAX_SAFE_INTEGER,
    ...(seconds !== undefined ? { interruptAfterTimeLimit: seconds * 1000, markInterruptAsFailure: false } : {}),
    ...(seed !== undefined ? { seed } : {}),
  });
  made = details.numRuns;
  usedSeed = details.seed;
} catch (err) {
  failure = err;
}
const elapsed = ((performance.now() - started) / 1000).toFixed(1);
const s = harness.stats;
const refusals = [...s.refused.entries()].sort((a, b) => b[1] - a[1]).map(([why, n]) => `  ${n}\t${why}`);
const summary = [
  `loads: ${s.runs} (family ${family}), served ${s.served} (remote ${s.remote}), refused ${s.refusals}`,
  ...refusals,
  `slowest load: ${s.slowestMs.toFixed(0)} ms: ${s.slowest}`,
  ...(s.tolerated.length > 0 ? [`known defect (poisoned transpiler) tolerated after ${s.tolerated.length} input(s), first: ${s.tolerated[0]}`] : []),
].join('\n');
try {
  await harness.close();
} catch (err) {
  failure ??= err;
}
if (failure !== undefined) {
  console.error(failure instanceof Error ? failure.message : String(failure));
  console.error(summary);
  process.exit(1); // a hang the run gave up on may still hold the event loop
}
console.log(`fuzz:plugins: ${made} runs, no failure in ${elapsed} s (seed ${usedSeed})`);
console.log(summary);
