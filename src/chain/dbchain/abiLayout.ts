// The canonical ABI layout of untrusted bytes, checked before any decoder touches them. A decoder follows
// offsets wherever they point, so hostile data can point many heads at one large tail: viem bounds the
// result at 32 times the input, which is still gigabytes for a few megabytes of calldata (enough to run
// the node out of memory). In the canonical layout every offset points just
// past the tail before it, so no byte is decoded twice and decoding is linear in the input.

/** The part of an ABI parameter the layout depends on (viem's `AbiParameter` fits). */
export interface LayoutParam {
  readonly type: string;
  readonly components?: readonly LayoutParam[];
}

/** Why bytes are not the canonical layout: `truncated` when a read runs past the end. */
export class AbiLayoutError extends Error {
  override name = 'AbiLayoutError';
  constructor(
    readonly truncated: boolean,
    message: string,
  ) {
    super(message);
  }
}

const WORD = 32;

function isDynamic(p: LayoutParam): boolean {
  if (p.type.endsWith('[]') || p.type === 'bytes' || p.type === 'string') return true;
  return p.type === 'tuple' && (p.components ?? []).some(isDynamic);
}

/** Bytes a parameter takes in its enclosing head. */
function headSize(p: LayoutParam): number {
  if (isDynamic(p)) return WORD;
  if (p.type === 'tuple') return (p.components ?? []).reduce((sum, c) => sum + headSize(c), 0);
  if (/\[\d+\]$/.test(p.type)) throw new AbiLayoutError(false, `fixed arrays (${p.type}) are not supported`);
  return WORD;
}

/** A word as a length or offset: anything beyond the input cannot be one. */
function readSize(bytes: Uint8Array, at: number, end: number): number {
  if (at + WORD > end) throw new AbiLayoutError(true, `a word at ${at} runs past the end (${end})`);
  for (let i = at; i < at + WORD - 6; i++)
    if (bytes[i] !== 0) throw new AbiLayoutError(true, `the size at ${at} is larger than the input`);
  let n = 0;
  for (let i = at + WORD - 6; i < at + WORD; i++) n = n * 256 + (bytes[i] as number);
  return n;
}

/** Checks a sequence of values laid out as a tuple at `base`; returns where its tail ends. */
function walkTuple(bytes: Uint8Array, base: number, params: readonly LayoutParam[], end: number): number {
  let head = base;
  let tail = base + params.reduce((sum, p) => sum + headSize(p), 0);
  if (tail > end) throw new AbiLayoutError(true, `a head of ${tail - base} bytes at ${base} runs past the end`);
  for (const p of params) {
    if (isDynamic(p)) {
      const offset = readSize(bytes, head, end);
      if (base + offset !== tail)
        throw new AbiLayoutError(false, `the offset at ${head} is ${offset}, the canonical one is ${tail - base}`);
      tail = walkTail(bytes, tail, p, end);
    } else if (p.type === 'tuple') {
      walkTuple(bytes, head, p.components ?? [], end);
    }
    head += headSize(p);
  }
  return tail;
}

/** Checks one dynamic value at `at`; returns where it ends. */
function walkTail(bytes: Uint8Array, at: number, p: LayoutParam, end: number): number {
  if (p.type === 'bytes' || p.type === 'string') {
    const length = readSize(bytes, at, end);
    const after = at + WORD + Math.ceil(length / WORD) * WORD;
    if (after > end) throw new AbiLayoutError(true, `${length} bytes at ${at} run past the end`);
    return after;
  }
  if (p.type.endsWith('[]')) {
    const element = { ...p, type: p.type.slice(0, -2) };
    const count = readSize(bytes, at, end);
    // Checked before the loop: a hostile count costs nothing.
    if (count * headSize(element) > end - at - WORD)
      throw new AbiLayoutError(true, `an array of ${count} at ${at} runs past the end`);
    return walkTuple(
      bytes,
      at + WORD,
      Array.from({ length: count }, () => element),
      end,
    );
  }
  return walkTuple(bytes, at, p.components ?? [], end);
}

/**
 * Checks that `bytes` are exactly the canonical layout of `params` (offsets in order, no gaps, no
 * sharing, nothing after the end). Values (padding, high bits) are the re-encoding's to check.
 * @throws AbiLayoutError
 */
export function checkCanonicalLayout(params: readonly LayoutParam[], bytes: Uint8Array): void {
  const end = walkTuple(bytes, 0, params, bytes.length);
  if (end !== bytes.length) throw new AbiLayoutError(false, `${bytes.length - end} bytes after the encoding`);
}
