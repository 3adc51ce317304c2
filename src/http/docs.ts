// The docs routes (a mount of createHttpApp): GET /docs.md, GET /docs/NAME.md and GET /llms.txt answer the
// node's manual (manual.ts) under the node's access rules, like the console's node document: the read
// scope, so a public read-only node serves them to anyone and a node with tokens to its token holders.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ArkivectorError } from '../errors.ts';
import { PACKAGE_ROOT } from '../packageInfo.ts';
import { listManual, readManual, type Manual } from './manual.ts';
import type { RouteMount } from './types.ts';

/** The route of the whole manual; the MCP instructions name it when an app serves it. */
export const DOCS_ROUTE = '/docs.md';

const HEADERS = { 'x-content-type-options': 'nosniff', 'cache-control': 'no-cache' } as const;
const MARKDOWN = { 'content-type': 'text/markdown; charset=utf-8', ...HEADERS } as const;
const TEXT = { 'content-type': 'text/plain; charset=utf-8', ...HEADERS } as const;

/**
 * The docs mount over the manual in `root`: its files are listed now, read at the first request and kept.
 * @param root the package root (README.md and docs/); default this package's
 * @example createHttpApp({ ...deps, mounts: [mountConsole, docsMount()] })
 */
export function docsMount(root: string = PACKAGE_ROOT): RouteMount {
  return (_app, { route, logger }) => {
    const files = listManual(root);
    const pages = new Set(files.filter((file) => file !== 'README.md').map((file) => file.slice('docs/'.length)));
    let manual: Promise<Manual> | undefined;
    const read = () => {
      manual ??= readManual(root, files, summaryOf(root)).then((read) => {
        if (read.skipped.length)
          logger.warn({ files: read.skipped }, 'docs left out: unreadable or over the size bound');
        return read;
      });
      return manual;
    };
    route('GET', DOCS_ROUTE, 'read', async (c) => c.body((await read()).document, 200, MARKDOWN));
    route('GET', '/llms.txt', 'read', async (c) => c.body((await read()).index, 200, TEXT));
    route('GET', '/docs/:page', 'read', async (c) => {
      const name = c.req.param('page') ?? '';
      const page = pages.has(name) ? (await read()).pages.find((p) => p.file === `docs/${name}`) : undefined;
      if (!page) throw new ArkivectorError('not_found', `no docs page ${name}; GET /llms.txt lists them`);
      return c.body(page.text, 200, MARKDOWN);
    });
  };
}

/** The package's description, the summary of the index. */
function summaryOf(root: string): string {
  try {
    const { description } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { description?: unknown };
    if (typeof description === 'string' && description) return description;
  } catch {
    // A root without package.json (a test folder): the generic summary.
  }
  return 'A node of arkivector: vector collections on the Arkiv chain for AI agents, over MCP and REST.';
}
