// README "Benchmarks": `npm run bench` measures each system's memory in a child process of its own (an
// in-process line read −29 / −10 B per vector: the store reused what raw hnswlib-node had freed).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);

test('npm run bench --memory-only measures hnswlib-node and the store each in its own child process', async () => {
  const { stdout, stderr } = await run(
    process.execPath,
    ['--import', 'tsx', 'scripts/bench.ts', '--memory-only', '--n', '500', '--dim', '8', '--queries', '10'],
    { env: { ...process.env, ARKIVECTOR_ENGINE: 'native' }, timeout: 120_000 },
  );
  const out = `${stdout}${stderr}`;
  for (const system of ['hnswlib-node', 'arkivector']) {
    const line = new RegExp(
      `memory \\(child process\\): ${system} (\\d+) B/vector \\(-?\\d+ B less V8's young generation; slope from n/2 to n (-?\\d+) B\\)`,
    ).exec(out);
    assert.ok(line, `no child-process memory line for ${system}:\n${out}`);
    assert.ok(Number(line[1]) > 0, `${system}: ${line[1]} B per vector`);
    // The slope is RSS growth over the second half alone: it counts pages like the total does, so it
    // is a number of bytes (at 500 × 8 a few pages either way), never missing or NaN.
    assert.ok(Number.isFinite(Number(line[2])), `${system}: slope ${line[2]}`);
    assert.match(
      out,
      new RegExp(`memory child ${system}: RSS \\d+ MiB before the build[^,]*, \\d+ MiB at 250 vectors`),
    );
  }
});
