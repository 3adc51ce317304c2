// Go's path.Match, ported line by line, for the `~` / GLOB operator of the pebble-bitmap-store node
// (the devnet's arkiv_query) and for the vector engine's glob filters.
//
// It works on UTF-8 bytes like Go does: literal characters compare bytewise, `?` and `[...]` consume a
// whole rune, and `*` / `?` never match '/'.

export interface PathMatchResult {
  matched: boolean;
  /** Go's ErrBadPattern. A malformed pattern never matches. */
  badPattern: boolean;
}

const encoder = new TextEncoder();
const BAD: PathMatchResult = { matched: false, badPattern: true };
const SLASH = 0x2f;
const STAR = 0x2a;
const BACKSLASH = 0x5c;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const CARET = 0x5e;
const DASH = 0x2d;
const QUESTION = 0x3f;
const RUNE_ERROR = 0xfffd;

/** Go path.Match(pattern, name) → (matched, err). */
export function pathMatch(pattern: string, name: string): PathMatchResult {
  let p: Uint8Array = encoder.encode(pattern);
  let n: Uint8Array = encoder.encode(name);

  patternLoop: while (p.length > 0) {
    const scanned = scanChunk(p);
    const { star, chunk } = scanned;
    p = scanned.rest;
    if (star && chunk.length === 0) {
      // Trailing * matches the rest of the name unless it contains a '/'.
      return { matched: !n.includes(SLASH), badPattern: false };
    }
    const first = matchChunk(chunk, n);
    // On the last chunk the name must be used up, or the star could still do better.
    if (first.ok && (first.rest.length === 0 || p.length > 0)) {
      n = first.rest;
      continue;
    }
    if (first.bad) return BAD;
    if (star) {
      // Let the star swallow i+1 bytes, never a '/'.
      for (let i = 0; i < n.length && n[i] !== SLASH; i++) {
        const r = matchChunk(chunk, n.subarray(i + 1));
        if (r.ok) {
          if (p.length === 0 && r.rest.length > 0) continue;
          n = r.rest;
          continue patternLoop;
        }
        if (r.bad) return BAD;
      }
    }
    // Go reports a malformed remainder even when the match already failed.
    while (p.length > 0) {
      const s = scanChunk(p);
      p = s.rest;
      if (matchChunk(s.chunk, new Uint8Array(0)).bad) return BAD;
    }
    return { matched: false, badPattern: false };
  }
  return { matched: n.length === 0, badPattern: false };
}

/** Go path.Match where a malformed pattern counts as no match, as the node's evaluator treats it. */
export function globMatch(pattern: string, name: string): boolean {
  return pathMatch(pattern, name).matched;
}

function scanChunk(p: Uint8Array): { star: boolean; chunk: Uint8Array; rest: Uint8Array } {
  let star = false;
  while (p.length > 0 && p[0] === STAR) {
    p = p.subarray(1);
    star = true;
  }
  let inRange = false;
  let i = 0;
  scan: for (; i < p.length; i++) {
    switch (p[i]) {
      case BACKSLASH:
        if (i + 1 < p.length) i++;
        break;
      case LBRACKET:
        inRange = true;
        break;
      case RBRACKET:
        inRange = false;
        break;
      case STAR:
        if (!inRange) break scan;
        break;
    }
  }
  return { star, chunk: p.subarray(0, i), rest: p.subarray(i) };
}

interface ChunkResult {
  rest: Uint8Array;
  ok: boolean;
  bad: boolean;
}

function matchChunk(chunk: Uint8Array, s: Uint8Array): ChunkResult {
  // After a mismatch Go keeps walking the chunk only to validate its syntax.
  let failed = false;
  while (chunk.length > 0) {
    if (!failed && s.length === 0) failed = true;
    const c = chunk[0];
    if (c === LBRACKET) {
      let r = 0;
      if (!failed) {
        const d = decodeRune(s);
        r = d.rune;
        s = s.subarray(d.size);
      }
      chunk = chunk.subarray(1);
      let negated = false;
      if (chunk.length > 0 && chunk[0] === CARET) {
        negated = true;
        chunk = chunk.subarray(1);
      }
      let match = false;
      let nrange = 0;
      for (;;) {
        if (chunk.length > 0 && chunk[0] === RBRACKET && nrange > 0) {
          chunk = chunk.subarray(1);
          break;
        }
        const lo = getEsc(chunk);
        if (lo === undefined) return { rest: new Uint8Array(0), ok: false, bad: true };
        chunk = lo.chunk;
        let hi = lo.rune;
        if (chunk[0] === DASH) {
          const h = getEsc(chunk.subarray(1));
          if (h === undefined) return { rest: new Uint8Array(0), ok: false, bad: true };
          chunk = h.chunk;
          hi = h.rune;
        }
        if (lo.rune <= r && r <= hi) match = true;
        nrange++;
      }
      if (match === negated) failed = true;
    } else if (c === QUESTION) {
      if (!failed) {
        if (s[0] === SLASH) failed = true;
        s = s.subarray(decodeRune(s).size);
      }
      chunk = chunk.subarray(1);
    } else {
      if (c === BACKSLASH) {
        chunk = chunk.subarray(1);
        if (chunk.length === 0) return { rest: new Uint8Array(0), ok: false, bad: true };
      }
      if (!failed) {
        if (chunk[0] !== s[0]) failed = true;
        s = s.subarray(1);
      }
      chunk = chunk.subarray(1);
    }
  }
  if (failed) return { rest: new Uint8Array(0), ok: false, bad: false };
  return { rest: s, ok: true, bad: false };
}

function getEsc(chunk: Uint8Array): { rune: number; chunk: Uint8Array } | undefined {
  if (chunk.length === 0 || chunk[0] === DASH || chunk[0] === RBRACKET) return undefined;
  if (chunk[0] === BACKSLASH) {
    chunk = chunk.subarray(1);
    if (chunk.length === 0) return undefined;
  }
  const d = decodeRune(chunk);
  if (d.rune === RUNE_ERROR && d.size === 1) return undefined;
  const rest = chunk.subarray(d.size);
  if (rest.length === 0) return undefined;
  return { rune: d.rune, chunk: rest };
}

/** utf8.DecodeRuneInString: invalid or truncated input yields (RuneError, 1); empty yields (RuneError, 0). */
function decodeRune(b: Uint8Array): { rune: number; size: number } {
  if (b.length === 0) return { rune: RUNE_ERROR, size: 0 };
  const b0 = b[0] ?? 0;
  if (b0 < 0x80) return { rune: b0, size: 1 };
  let size: number;
  let min: number;
  let rune: number;
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    size = 2;
    min = 0x80;
    rune = b0 & 0x1f;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    size = 3;
    min = 0x800;
    rune = b0 & 0x0f;
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    size = 4;
    min = 0x10000;
    rune = b0 & 0x07;
  } else {
    return { rune: RUNE_ERROR, size: 1 };
  }
  if (b.length < size) return { rune: RUNE_ERROR, size: 1 };
  for (let i = 1; i < size; i++) {
    const bi = b[i] ?? 0;
    if ((bi & 0xc0) !== 0x80) return { rune: RUNE_ERROR, size: 1 };
    rune = (rune << 6) | (bi & 0x3f);
  }
  if (rune < min || rune > 0x10ffff || (rune >= 0xd800 && rune <= 0xdfff)) return { rune: RUNE_ERROR, size: 1 };
  return { rune, size };
}
