/** A short fuzz run of the codec pair on every test run; `npm run fuzz` runs it for longer. */
import { it } from 'node:test';
import { runCodecFuzz } from './fuzz-properties.js';

it('fuzz: random and mutated frames in both directions never throw, and decode, drop or close', () => {
  runCodecFuzz({ numRuns: 400 });
});
