/**
 * The long fuzz run: `npm run fuzz -- --runs 100000` or `npm run fuzz -- --seconds 600`
 * (default: 60 seconds). Prints the seed on failure, so a finding can be replayed with `--seed`.
 */
import { runCodecFuzz } from './fuzz-properties.js';

const flag = (name: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? undefined : Number(process.argv[at + 1]);
};
const runs = flag('runs');
const seconds = flag('seconds') ?? (runs === undefined ? 60 : undefined);
const seed = flag('seed');

const started = performance.now();
runCodecFuzz({
  numRuns: runs ?? Number.MAX_SAFE_INTEGER,
  ...(seconds !== undefined ? { interruptAfterTimeLimit: seconds * 1000, markInterruptAsFailure: false } : {}),
  ...(seed !== undefined ? { seed } : {}),
  verbose: 1,
});
console.log(`fuzz: no failure in ${((performance.now() - started) / 1000).toFixed(1)} s`);
