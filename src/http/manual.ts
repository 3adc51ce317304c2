// The node's manual as agents read it: the package's README.md and docs/*.md, listed once, read once, as
// one markdown document (GET /docs.md), one page each (GET /docs/NAME.md) and an index in the llms.txt
// convention (GET /llms.txt). The files are the ones shipped in the package; the sizes are bounded so a
// stray large file cannot make every answer large.
import { readdirSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The most one page may hold; a larger file is left out. */
export const MANUAL_PAGE_MAX_BYTES = 1 << 20;
/** The most the whole manual may hold; the pages past it are left out. */
export const MANUAL_MAX_BYTES = 4 << 20;
/** A page's file name: a plain name, so it is also a path segment of its route. */
const PAGE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*\.md$/;
/** The longest note an index line carries. */
const NOTE_MAX_CHARS = 200;

export interface ManualPage {
  /** The file's path in the package: `README.md`, `docs/access.md`. */
  file: string;
  /** The route that answers this page alone: `/docs/access.md`; the README's is /docs.md. */
  route: string;
  title: string;
  /** The first sentence of the page's first paragraph, if it has one. */
  note: string;
  text: string;
}

export interface Manual {
  pages: readonly ManualPage[];
  /** The README and every page, each after a separator naming its file. */
  document: string;
  /** The llms.txt index. */
  index: string;
  /** Files left out: over a size bound, or unreadable. */
  skipped: readonly string[];
}

/**
 * The files of the manual in `root`, in the order the document gives them: README.md, then docs/*.md by
 * name. Listed at once (so the routes know the pages); read by `readManual`.
 */
export function listManual(root: string): string[] {
  let names: string[] = [];
  try {
    names = readdirSync(join(root, 'docs'), { withFileTypes: true })
      .filter((entry) => entry.isFile() && PAGE_NAME.test(entry.name))
      .map((entry) => entry.name)
      .sort();
  } catch {
    // No docs/ folder: the README alone.
  }
  return ['README.md', ...names.map((name) => `docs/${name}`)];
}

/**
 * Reads the files `listManual` gave and builds the document and the index.
 * @param root the package root
 * @param files from listManual
 * @param summary the blockquote of the index (the package's description)
 */
export async function readManual(root: string, files: readonly string[], summary: string): Promise<Manual> {
  const pages: ManualPage[] = [];
  const skipped: string[] = [];
  let total = 0;
  for (const file of files) {
    const path = join(root, file);
    try {
      const size = statSync(path).size;
      if (size > MANUAL_PAGE_MAX_BYTES || total + size > MANUAL_MAX_BYTES) {
        skipped.push(file);
        continue;
      }
      const text = await readFile(path, 'utf8');
      total += size;
      const route = file === 'README.md' ? '/docs.md' : `/${file}`;
      pages.push({ file, route, ...heading(text, file), text });
    } catch {
      skipped.push(file);
    }
  }
  return { pages, document: document(pages), index: index(pages, summary), skipped };
}

/** The separator before each file, naming it (and the route that answers it alone). */
const separator = (page: ManualPage) =>
  page.file === 'README.md'
    ? `<!-- file: ${page.file} -->`
    : `---\n\n<!-- file: ${page.file} (also at ${page.route}) -->`;

function document(pages: readonly ManualPage[]): string {
  return pages.map((page) => `${separator(page)}\n\n${page.text.trim()}\n`).join('\n');
}

function index(pages: readonly ManualPage[], summary: string): string {
  const lines = pages.map((page) => {
    const name = page.file === 'README.md' ? `${page.title} (README, then every page below)` : page.title;
    return `- [${name}](${page.route})${page.note ? `: ${page.note}` : ''}`;
  });
  return [
    '# arkivector',
    '',
    `> ${summary}`,
    '',
    'The manual of this node: GET /docs.md is the README and every page below as one markdown document; each page is also at its own address.',
    '',
    '## Docs',
    '',
    ...lines,
    '',
  ].join('\n');
}

/** A page's title (its first H1, else its file name) and the first sentence of its first paragraph. */
function heading(text: string, file: string): { title: string; note: string } {
  const blocks = text.split(/\n\s*\n/).map((block) => block.trim());
  const h1 = blocks.find((block) => /^# /.test(block));
  const title = clean(h1 ? (h1.split('\n')[0] ?? '').slice(2) : file);
  const prose = blocks.find((block) => /^[A-Za-z`*_(]/.test(block) && !/^(```|- |\* )/.test(block)) ?? '';
  const flat = clean(prose.replace(/\s+/g, ' '));
  const sentence = /^.+?[.!?](?=\s|$)/.exec(flat)?.[0] ?? flat;
  const cut = sentence.lastIndexOf(' ', NOTE_MAX_CHARS - 1);
  const note =
    sentence.length > NOTE_MAX_CHARS ? `${sentence.slice(0, cut > 0 ? cut : NOTE_MAX_CHARS - 1)} …` : sentence;
  return { title, note };
}

/** Markdown links become their text; brackets are dropped so the index's own links stay well-formed. */
const clean = (text: string) =>
  text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[[\]]/g, '')
    .trim();
