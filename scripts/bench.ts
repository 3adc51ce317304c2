// `npm run bench -- [SUITE] [options]`: the one bench command. Without a suite it runs `engine`. Each
// suite is a module under scripts/bench/ that parses its own options (scripts/bench/args.ts) and runs when
// imported; docs/benchmarks.md lists the suites, their options and their latest results.
import { given, selectSuite, type Suite } from './bench/args.ts';

const SUITE_MODULES: Record<Suite, string> = {
  engine: './bench/engine.ts',
  filtered: './bench/filtered.ts',
  memory: './bench/engine.ts',
  peers: './bench/peers.ts',
  indexer: './bench/indexer.ts',
  rest: './bench/rest.ts',
  soak: './bench/soak.ts',
  rebuild: './bench/rebuild.ts',
  verify: './bench/verify.ts',
};

/** `--graph`: the suite's measurement on the native graph alone, without a store around it. */
const GRAPH_MODULES: Partial<Record<Suite, string>> = {
  engine: './bench/engineGraph.ts',
  filtered: './bench/filteredGraph.ts',
};

let suite: Suite;
try {
  suite = selectSuite(process.argv.slice(2));
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(2);
}
await import((given('graph') ? GRAPH_MODULES[suite] : undefined) ?? SUITE_MODULES[suite]);
