// The README as test input: its sections, fenced blocks and the shell commands in them, so a test runs
// what a reader copies (and fails when the README changes into something that does not work).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { chmod, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

export const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The text of the section whose heading line starts with `heading` (up to the next heading of its level). */
export function readmeSection(heading: string): string {
  const lines = README.split('\n');
  const start = lines.findIndex((line) => /^#{2,4} /.test(line) && line.replace(/^#+ /, '').startsWith(heading));
  if (start < 0) throw new Error(`no README section "${heading}"`);
  const level = /^#+/.exec(lines[start] ?? '')?.[0].length ?? 2;
  const end = lines.findIndex((line, i) => i > start && new RegExp(`^#{2,${level}} `).test(line));
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
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
  if (head < 0) throw new Error(`no README table with the header "${firstHeader}"`);
  const rows: string[][] = [];
  for (const line of lines.slice(head + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(split(line));
  }
  return rows;
}

/** The text of every backticked span of a Markdown cell, in order. */
export const codeSpans = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '');
