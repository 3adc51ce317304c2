// Indexer benchmark: catch-up rate (blocks/s, entities/s) when tailing, bootstrap rate with the pinned-block
// query, and restart time from a snapshot against a full rebuild, at dim 384 against a devnet in a process
// of its own. Usage: npm run bench -- indexer [--entities 20000] [--dim 384] [--per-tx 200] [--out FILE]
// [--rounds N] [--baseline CHECKOUT] [--profile DIR]; `--large` is 100k × 384. Each phase, and raw
// hnswlib-node inserting the same vectors (the catch-up's ceiling), runs in a fresh child process
// (indexerThroughput.ts). `npm run bench:indexer` is the same.
// Memory (RSS per live entity, read-only node and write daemon): npm run bench -- indexer --memory
// [--entities 30000] [--dim 32] [--heap-dir DIR] [--out FILE]; `--quick` shrinks either mode.
// JSON-RPC calls of the DB-chain follower: npm run bench -- indexer --calls [--out FILE] (indexerCalls.ts).
// Heap per entity of each structure of a node, built alone: npm run bench -- indexer --structures
// [--entities 20000] [--dim 32] [--out FILE] (indexerStructures.ts).
import { nodeRole, runMemoryBench } from './indexerMemory.ts';
import { runThroughputBench, throughputChild } from './indexerThroughput.ts';
import { BENCH_ENTRY, benchArgs, given } from './args.ts';
import { runCallsBench } from './indexerCalls.ts';
import { runStructuresBench } from './indexerStructures.ts';
import { writeJson } from './output.ts';

const values = benchArgs({
  entities: { type: 'string', default: '20000' },
  dim: { type: 'string', default: '384' },
  'per-tx': { type: 'string', default: '200' },
  rounds: { type: 'string', default: '1' },
  baseline: { type: 'string' },
  out: { type: 'string' },
  memory: { type: 'boolean', default: false },
  calls: { type: 'boolean', default: false },
  structures: { type: 'boolean', default: false },
  large: { type: 'boolean', default: false },
  quick: { type: 'boolean', default: false },
  'heap-dir': { type: 'string' },
  profile: { type: 'string' },
  role: { type: 'string' },
  rpc: { type: 'string' },
  task: { type: 'string' },
});
const log = (line: string) => process.stderr.write(`${line}\n`);

if (values.role === 'node') await nodeRole(values.rpc ?? '');
else if (values.role === 'throughput-child') await throughputChild(values.task ?? '');
else if (values.calls) await runCallsBench(values.out);
else if (values.structures) {
  const result = await runStructuresBench(
    Number(values.quick ? 2000 : values.entities),
    Number(given('dim') ? values.dim : 32),
  );
  console.table(result.bytes_per_entity);
  log(`${result.entities} entities, dim ${result.dim}: live heap bytes per entity of each structure, built alone`);
  writeJson(values.out, result);
} else if (values.memory) {
  const total = Number(values.quick ? 2000 : given('entities') ? values.entities : 30_000);
  const dim = Number(given('dim') ? values.dim : 32);
  const result = await runMemoryBench(BENCH_ENTRY, total, dim, values['heap-dir']);
  console.table({
    'read-only node': result.read_only,
    'write daemon': result.write_daemon,
  });
  log(`${total} entities, dim ${dim}, ${result.document_bytes}-byte documents, two attributes`);
  writeJson(values.out, result);
} else await throughputBench();

async function throughputBench(): Promise<void> {
  const total = Number(values.quick ? 2000 : values.large ? 100_000 : values.entities);
  const dim = Number(values.large ? 384 : values.dim);
  const results = await runThroughputBench(BENCH_ENTRY, {
    entities: total,
    dim,
    perTx: Number(values['per-tx']),
    rounds: Number(values.rounds),
    baseline: values.baseline,
    profileDir: values.profile,
    log,
  });
  const restart = results.snapshot_restart;
  console.table({
    'catch-up (tail blocks)': {
      seconds: results.catch_up.seconds.toFixed(2),
      'blocks/s': results.catch_up.blocks_per_second.toFixed(1),
      'entities/s': results.catch_up.entities_per_second.toFixed(0),
    },
    'bootstrap (pinned query)': {
      seconds: results.bootstrap.seconds.toFixed(2),
      'blocks/s': '-',
      'entities/s': results.bootstrap.entities_per_second.toFixed(0),
    },
    'restart from snapshot': {
      seconds: restart.seconds.toFixed(2),
      'blocks/s': '-',
      'entities/s': '-',
    },
    'raw hnswlib-node inserts': {
      seconds: results.raw_hnswlib_insert.seconds.toFixed(2),
      'blocks/s': '-',
      'entities/s': results.raw_hnswlib_insert.entities_per_second.toFixed(0),
    },
  });
  log(
    `catch-up at ${results.catch_up_vs_raw_insert.toFixed(2)}× the raw insert rate (in CPU time ${results.catch_up_vs_raw_insert_cpu.toFixed(2)}×; ${results.catch_up.blocks_fetch_seconds.toFixed(2)} s of block fetches in flight); restart ${results.restart_speedup_vs_rebuild.toFixed(1)}× faster than a rebuild`,
  );
  if (results.baseline)
    log(
      `baseline ${results.baseline.checkout}: catch-up ${results.baseline.catch_up_seconds.toFixed(2)} s (CPU ${results.baseline.catch_up_cpu_seconds.toFixed(2)} s), ${results.baseline.catch_up_vs_raw_insert.toFixed(2)}× the raw insert rate`,
    );
  if (restart.snapshot_load_seconds !== undefined && restart.store_load_seconds !== undefined)
    log(
      `restart: ${restart.snapshot_load_seconds.toFixed(2)} s loading the snapshot (stores ${restart.store_load_seconds.toFixed(2)} s, tracked entities and the rest ${(restart.snapshot_load_seconds - restart.store_load_seconds).toFixed(2)} s); the child process started in ${restart.process_start_seconds.toFixed(2)} s before that`,
    );
  writeJson(values.out, results);
}
