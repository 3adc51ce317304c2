// The devnet's --state file: an append-only journal of JSON lines (a header, then one line per block), each
// block appended and fsynced before any answer that depends on it, so an acknowledged write survives a
// SIGKILL or a power cut and a block number is never reused for other content. A reorg rewrites the
// file atomically (temp, fsync, rename, fsync of the folder). Format 1 (one JSON document rewritten
// after blocks) is still read, and becomes a journal at the next write.
import { open, readFile, rename, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Hex } from 'viem';

/** 2: JSON lines; 1: one JSON document `{version, chainId, genesisTimestamp, blocks}`. */
export const STATE_FILE_VERSION = 2;

export interface SavedBlock {
  timestamp: number;
  salt: number;
  txs: Hex[];
}

export interface SavedState {
  version: number;
  chainId: number;
  /** The generation whose rules made the chain (`v1`, `dbchain`); absent in files written before the DB-chain devnet: v1. */
  protocol?: string;
  genesisTimestamp: number;
  blocks: SavedBlock[];
}

/** A state file this node cannot use: refused with the reason, never overwritten. */
export class StateFileError extends Error {
  override name = 'StateFileError';
}

const isBlock = (b: unknown): b is SavedBlock => {
  const block = b as SavedBlock | null;
  return (
    typeof block === 'object' &&
    block !== null &&
    Number.isSafeInteger(block.timestamp) &&
    Number.isSafeInteger(block.salt) &&
    Array.isArray(block.txs) &&
    block.txs.every((tx) => typeof tx === 'string' && /^0x[0-9a-fA-F]*$/.test(tx))
  );
};

function header(file: string, value: unknown): Omit<SavedState, 'blocks'> {
  const { version, chainId, protocol, genesisTimestamp } = (value ?? {}) as Partial<SavedState>;
  if (
    typeof version !== 'number' ||
    typeof chainId !== 'number' ||
    typeof genesisTimestamp !== 'number' ||
    ![version, chainId, genesisTimestamp].every(Number.isSafeInteger)
  )
    throw new StateFileError(`state file ${file} has no valid header (version, chainId, genesisTimestamp)`);
  if (protocol !== undefined && typeof protocol !== 'string')
    throw new StateFileError(`state file ${file} has no valid header (protocol)`);
  return protocol === undefined
    ? { version, chainId, genesisTimestamp }
    : { version, chainId, protocol, genesisTimestamp };
}

/**
 * Reads a state file; undefined when there is none.
 * @throws StateFileError when it cannot be read or parsed, or any block in it is malformed
 */
export async function readStateFile(file: string): Promise<SavedState | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new StateFileError(`cannot read state file ${file}: ${(error as Error).message}`);
  }
  const lines = text.split('\n');
  let first: unknown;
  try {
    first = JSON.parse(lines[0] ?? '');
  } catch {
    // Format 1 may be pretty-printed over several lines: try the whole document.
    try {
      first = JSON.parse(text);
    } catch {
      throw new StateFileError(`state file ${file} is not JSON (damaged?); refusing to start over it`);
    }
    lines.length = 1;
  }
  const head = header(file, first);
  if (head.version === 1) {
    const blocks = (first as { blocks?: unknown }).blocks;
    if (!Array.isArray(blocks)) throw new StateFileError(`state file ${file} has no list of blocks (damaged?)`);
    const bad = blocks.findIndex((b) => !isBlock(b));
    if (bad >= 0) throw new StateFileError(`state file ${file}: block ${bad + 1} is malformed (damaged?)`);
    return { ...head, blocks };
  }
  if (head.version !== STATE_FILE_VERSION)
    throw new StateFileError(
      `state file ${file} is of format ${head.version}; this version reads formats 1 and ${STATE_FILE_VERSION}`,
    );
  const blocks: SavedBlock[] = [];
  for (const [i, line] of lines.entries()) {
    if (i === 0) continue;
    const last = i === lines.length - 1;
    if (line === '' && last) break;
    let block: unknown;
    try {
      block = JSON.parse(line);
    } catch {
      // A line cut short at the very end was being appended when the process died: it was never
      // acknowledged (answers wait for the fsync), so it is dropped. Anywhere else it is damage.
      if (last) {
        process.stderr.write(`devnet: state file ${file}: dropping an incomplete last block (never acknowledged)\n`);
        break;
      }
      throw new StateFileError(`state file ${file}: line ${i + 1} is not JSON (damaged?)`);
    }
    if (!isBlock(block))
      throw new StateFileError(`state file ${file}: block ${blocks.length + 1} is malformed (damaged?)`);
    blocks.push(block);
  }
  return { ...head, blocks };
}

const line = (value: unknown) => `${JSON.stringify(value)}\n`;

async function fsyncDir(path: string): Promise<void> {
  const dir = await open(dirname(path), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

/** Appends blocks to a journal (fsync each), or rewrites it whole, one operation at a time. */
export class StateJournal {
  readonly #file: string;
  #handle: FileHandle | undefined;
  #queue: Promise<void> = Promise.resolve();

  constructor(file: string) {
    this.#file = file;
  }

  /** Resolves once every write queued so far is on disk; rejects if one failed. */
  flushed(): Promise<void> {
    return this.#queue;
  }

  append(block: SavedBlock): Promise<void> {
    return this.#enqueue(async () => {
      this.#handle ??= await open(this.#file, 'a');
      await this.#handle.write(line(block));
      await this.#handle.datasync();
    });
  }

  /** Replaces the whole file atomically (a reorg, or a format 1 file becoming a journal). */
  rewrite(state: Omit<SavedState, 'version'>): Promise<void> {
    return this.#enqueue(async () => {
      await this.#handle?.close();
      this.#handle = undefined;
      const temp = `${this.#file}.tmp`;
      const out = await open(temp, 'w');
      try {
        const { blocks, ...rest } = state;
        await out.write(line({ version: STATE_FILE_VERSION, ...rest }) + blocks.map(line).join(''));
        await out.sync();
      } finally {
        await out.close();
      }
      await rename(temp, this.#file);
      await fsyncDir(this.#file);
    });
  }

  async close(): Promise<void> {
    await this.#queue.catch(() => undefined);
    await this.#handle?.close();
    this.#handle = undefined;
  }

  #enqueue(work: () => Promise<void>): Promise<void> {
    // A failed write fails its waiters, and the next write is tried anyway.
    const next = this.#queue.catch(() => undefined).then(work);
    this.#queue = next;
    return next;
  }
}
