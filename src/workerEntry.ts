// How a worker thread module is started, for every worker of the node (graph rebuilds, the local
// embedder). The module is found next to its caller: `.ts` under tsx (tests, a checkout), `.js` in dist/
// (the package). Node 20 does not apply the parent's `--import tsx` hooks to a worker's entry module (and a
// checkout's `bin/arkivector.js` registers tsx through its API, which a worker does not inherit), so a
// `.ts` worker is started by a two-line bootstrap that registers tsx in the worker, then imports it.

/** A `.ts` worker's bootstrap (CommonJS eval code, hence the dynamic imports); a `.js` one starts as is. */
export function workerEntry(url: URL): { entry: URL | string; eval: boolean } {
  if (!url.pathname.endsWith('.ts')) return { entry: url, eval: false };
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  return {
    entry: `import(${tsx}).then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); });`,
    eval: true,
  };
}

/** The URL of module `name` (without extension) beside `base`, in the build `base` belongs to. */
export const siblingModule = (name: string, base: string): URL =>
  new URL(`./${name}${base.endsWith('.ts') ? '.ts' : '.js'}`, base);
