// Preloaded into each node of `npm run bench:soak` (`node --expose-gc --import …/soakProbe.mjs`): on SIGUSR2
// the node collects fully, lets the finalizers the collection queued run (fetch's abort listeners are
// dropped by one) and collects again, then writes its process.memoryUsage() as JSON into
// ARKIVECTOR_SOAK_PROBE_DIR, and a heap snapshot beside it when ARKIVECTOR_SOAK_HEAP_SNAPSHOT is set.
// Plain JavaScript: it loads before the node's own TypeScript loader.
import { writeFileSync } from 'node:fs';
import { writeHeapSnapshot } from 'node:v8';

const dir = process.env.ARKIVECTOR_SOAK_PROBE_DIR;
const gc = globalThis.gc;
const pause = () => new Promise((resolve) => setTimeout(resolve, 200));
let taken = 0;

if (dir && gc) {
  process.on('SIGUSR2', () => {
    void (async () => {
      for (let i = 0; i < 3; i++) {
        gc();
        await pause();
      }
      gc();
      const memory = process.memoryUsage();
      const name = `${dir}/${process.pid}-${++taken}`;
      const snapshot = process.env.ARKIVECTOR_SOAK_HEAP_SNAPSHOT
        ? writeHeapSnapshot(`${name}.heapsnapshot`)
        : undefined;
      // Written last: the soak reads the snapshot once this file exists.
      writeFileSync(`${name}.json`, JSON.stringify({ ...memory, snapshot }));
    })();
  });
}
