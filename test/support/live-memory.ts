import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/**
 * What the process keeps live, in bytes: the V8 heap and Buffers after a full collection. For
 * specs that bound what a server holds: RSS is no measure in a jest worker, whose process other
 * suites share and whose garbage moves it by hundreds of MB.
 */
export function liveMemory(): number {
  collectGarbage();
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
}
