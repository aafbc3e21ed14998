/**
 * What the process holds after a full garbage collection (heap and array buffers): the measure of
 * the hostile memory tests. Importing this turns on `gc` for the process (`--expose-gc`).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

export function heldAfterGc(): number {
  gc();
  gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}
