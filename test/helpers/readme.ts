// The manual as test input: README.md and the pages of docs/, their sections, fenced blocks and the shell
// commands in them, so a test runs what a reader copies (and fails when the text changes into something that
// does not work).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { chmod, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

const ROOT = new URL('../../', import.meta.url);

export const README = readFileSync(new URL('README.md', ROOT), 'utf8');

/** The manual's files, README.md first, then every docs/*.md by name (paths relative to the repository). */
export const MANUAL_FILES: readonly string[] = [
  'README.md',
  ...readdirSync(new URL('docs/', ROOT))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

/** The text of one file of the manual: `README.md`, `docs/filters.md`, or a page by its name alone (`filters.md`). */
export function doc(file: string): string {
  const path = file === 'README.md' || file.startsWith('docs/') ? file : `docs/${file}`;
  return readFileSync(new URL(path, ROOT), 'utf8');
}

/** Every file of the manual, README.md first, joined. */
export const MANUAL = MANUAL_FILES.map(doc).join('\n');

/** The section of `text` whose heading starts with `heading`, up to the next heading of its level or above. */
function sectionOf(text: string, heading: string): string | undefined {
  const lines = text.split('\n');
  let fenced = false;
  const isHeading = lines.map((line) => {
    if (line.startsWith('```')) fenced = !fenced;
    return !fenced && /^#{1,4} /.test(line);
  });
  const start = lines.findIndex((line, i) => isHeading[i] && line.replace(/^#+ /, '').startsWith(heading));
  if (start < 0) return undefined;
  const level = /^#+/.exec(lines[start] ?? '')?.[0].length ?? 2;
  const end = lines.findIndex((line, i) => i > start && isHeading[i] && (/^#+/.exec(line)?.[0].length ?? 9) <= level);
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
}

/** The section of one file of the manual (see `doc`) whose heading starts with `heading`. */
export function docSection(file: string, heading: string): string {
  const section = sectionOf(doc(file), heading);
  if (section === undefined) throw new Error(`no section "${heading}" in ${file}`);
  return section;
}

/**
 * The manual's sections whose heading starts with `heading`: README.md's first, then the docs/ pages', joined
 * (a page's title is a section that runs to its end). For tests that hold a sentence wherever the manual says it.
 */
export function readmeSection(heading: string): string {
  const found = MANUAL_FILES.map((file) => sectionOf(doc(file), heading)).filter((s) => s !== undefined);
  if (found.length === 0) throw new Error(`no section "${heading}" in the README or docs/`);
  return found.join('\n');
}

/** The fenced code blocks of `text` in language `lang`. */
export function fencedBlocks(text: string, lang: string): string[] {
  return [...text.matchAll(new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map((m) => m[1] ?? '');
}

/** The commands of a shell block: continuation lines joined, blank and comment-only lines dropped. */
export function shellCommands(block: string): string[] {
  return block
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.trimStart().startsWith('#'));
}

/** A directory with an `arkivector` on it that runs this checkout (what `npm install -g` would put on PATH). */
export async function arkivectorOnPath(dir: string): Promise<string> {
  const bin = resolve('bin/arkivector.js');
  const shim = join(dir, 'arkivector');
  await writeFile(shim, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(bin)} "$@"\n`);
  await chmod(shim, 0o755);
  return dir;
}

export interface ShellRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs one command line in bash (pipefail), bounded: killed after `timeoutMs`. */
export async function runShell(command: string, env: NodeJS.ProcessEnv, timeoutMs = 120_000): Promise<ShellRun> {
  const child = spawn('bash', ['-o', 'pipefail', '-c', command], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/**
 * The body rows of the first Markdown table in `text` whose header row starts with `firstHeader`, as cells
 * (trimmed; `\|` inside a cell is a literal `|`).
 */
export function tableRows(text: string, firstHeader: string): string[][] {
  const split = (line: string) =>
    line
      .trim()
      .replace(/^\||\|$/g, '')
      .split(/(?<!\\)\|/)
      .map((cell) => cell.trim().replace(/\\\|/g, '|'));
  const lines = text.split('\n');
  const head = lines.findIndex((line) => line.startsWith('|') && split(line)[0] === firstHeader);
  if (head < 0) throw new Error(`no table with the header "${firstHeader}"`);
  const rows: string[][] = [];
  for (const line of lines.slice(head + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(split(line));
  }
  return rows;
}

/** The text of every backticked span of a Markdown cell, in order. */
export const codeSpans = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '');
