// Splits a document's text into chunks that suit an embedding model: a heading starts a new chunk,
// paragraphs are packed together up to a size bound, consecutive chunks of one section share a small
// overlap, and nothing is split inside a word. Text without spaces (Chinese, Japanese) is split after
// sentence punctuation, and only failing that between characters (never inside a surrogate pair).
import { createHash } from 'node:crypto';

/** Most characters (UTF-16 code units) in one chunk. */
export const INGEST_CHUNK_MAX_CHARS = 1200;
/** Characters a chunk repeats from the end of the previous chunk of the same section. */
export const INGEST_CHUNK_OVERLAP_CHARS = 150;
/** A file that makes more chunks is skipped (it would take more transactions than anyone means to spend). */
export const INGEST_MAX_CHUNKS_PER_FILE = 5000;

export interface Chunk {
  /** 0-based position in the file. */
  index: number;
  text: string;
  /** sha256 of the text, hex: equal hashes mean nothing to write. */
  sha: string;
}

export interface ChunkOptions {
  maxChars?: number;
  overlapChars?: number;
}

export function contentSha(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export function chunkText(text: string, options: ChunkOptions = {}): Chunk[] {
  const max = options.maxChars ?? INGEST_CHUNK_MAX_CHARS;
  const overlap = Math.min(options.overlapChars ?? INGEST_CHUNK_OVERLAP_CHARS, Math.floor(max / 4));
  const texts: string[] = [];
  for (const section of sections(text)) texts.push(...packSection(section, max, overlap));
  return texts.map((t, index) => ({ index, text: t, sha: contentSha(t) }));
}

const HEADING = /^\s{0,3}#{1,6}(\s|$)/;
const isHeading = (paragraph: string) => HEADING.test(paragraph) && !paragraph.includes('\n');
/** Least room after headings worth filling (a cut piece shorter than a long word would split it). */
const WORD_ROOM = 40;

/**
 * Sections start at Markdown ATX headings (outside fenced code); each is a list of paragraphs. A heading
 * directly followed by another (an `<h1>` then an `<h2>`) joins the next section, and headings at the very
 * end join the previous one: no section, so no chunk, is headings without content.
 */
function sections(text: string): string[][] {
  const lines = text.replace(/\r\n?/g, '\n').replace(/\f/g, '\n\n').split('\n');
  const out: string[][] = [];
  let paragraphs: string[] = [];
  let paragraph: string[] = [];
  let fenced = false;
  const endParagraph = () => {
    const p = paragraph.join('\n').trim();
    if (p) paragraphs.push(p);
    paragraph = [];
  };
  const endSection = () => {
    endParagraph();
    if (paragraphs.length) out.push(paragraphs);
    paragraphs = [];
  };
  for (const line of lines) {
    if (/^\s{0,3}(```|~~~)/.test(line)) fenced = !fenced;
    if (!fenced && HEADING.test(line)) {
      endParagraph();
      if (!paragraphs.every(isHeading)) endSection();
      paragraphs.push(line.trim());
      continue;
    }
    if (!fenced && line.trim() === '') endParagraph();
    else paragraph.push(line);
  }
  endParagraph();
  const previous = out.at(-1);
  if (previous && paragraphs.every(isHeading)) previous.push(...paragraphs);
  else if (paragraphs.length) out.push(paragraphs);
  return out;
}

/**
 * Packs a section's paragraphs into chunks of at most `max` characters. Headings that end the section (the
 * document's last section, see `sections`) go into its last chunk, or, where they do not fit there, into a
 * final chunk that starts with the end of that chunk's text: never a chunk of headings alone.
 */
function packSection(paragraphs: string[], max: number, overlap: number): string[] {
  let body = paragraphs.length;
  while (body > 0 && isHeading(paragraphs[body - 1] as string)) body--;
  if (body === 0 || body === paragraphs.length) return packParagraphs(paragraphs, max, overlap);
  const chunks = packParagraphs(paragraphs.slice(0, body), max, overlap);
  const headings = paragraphs.slice(body).join('\n\n');
  const last = chunks.at(-1) as string;
  const room = max - headings.length - 2;
  if (last.length + 2 + headings.length <= max) chunks[chunks.length - 1] = `${last}\n\n${headings}`;
  // As much of the last chunk as a chunk's overlap would carry (at least a long word's room).
  else if (room >= WORD_ROOM)
    chunks.push(`${textTail(last, Math.min(room, Math.max(overlap, WORD_ROOM)))}\n\n${headings}`);
  else chunks.push(...packParagraphs(paragraphs.slice(body), max, overlap));
  return chunks;
}

/** The end of `text`, at most `room` characters, starting at a word boundary (or a character one in CJK). */
function textTail(text: string, room: number): string {
  const trimmed = text.trimEnd();
  if (trimmed.length <= room) return trimmed;
  const window = trimmed.slice(trimmed.length - room);
  const space = window.search(/\s/);
  if (space >= 0 && space < window.length - 1) return window.slice(space).trimStart();
  return dropLeadingLowSurrogate(window);
}

function packParagraphs(paragraphs: string[], max: number, overlap: number): string[] {
  const chunks: string[] = [];
  let current = '';
  // Pieces of one paragraph join with nothing (they keep their own spacing); paragraphs with a blank line.
  const add = (piece: string, separator: string) => {
    if (!current) {
      current = piece;
      return;
    }
    if (current.length + separator.length + piece.length <= max) {
      current += separator + piece;
      return;
    }
    chunks.push(current.trim());
    const tail = overlapTail(current, overlap);
    const joint = /\s$/.test(tail) || isCjk(tail.slice(-1)) || isCjk(piece.slice(0, 1)) ? '' : ' ';
    current = tail && tail.length + joint.length + piece.length <= max ? `${tail}${joint}${piece}` : piece;
  };
  const split = (text: string) => (text.length <= max ? [text] : splitLong(text, Math.max(1, max - overlap - 1)));
  for (const paragraph of paragraphs) {
    // Pieces of a long paragraph leave room for the overlap that the next chunk starts with.
    let pieces = split(paragraph);
    // Headings never end a chunk alone: the first piece after them is cut to the room they leave.
    const room = max - current.length - 2;
    const first = pieces[0] ?? '';
    if (current !== '' && current.split('\n\n').every(isHeading) && first.length > room && room >= WORD_ROOM) {
      const head = splitLong(paragraph, room)[0] ?? '';
      pieces = [head, ...(head.length < paragraph.length ? split(paragraph.slice(head.length)) : [])];
    }
    for (const [i, piece] of pieces.entries()) add(piece, i === 0 ? '\n\n' : '');
  }
  if (current.trim()) chunks.push(current.trim());
  return chunks;
}

/** The end of a chunk, at most `overlap` characters, starting at a word or sentence boundary. */
function overlapTail(text: string, overlap: number): string {
  if (overlap <= 0) return '';
  const trimmed = text.trimEnd();
  if (trimmed.length <= overlap) return '';
  const window = trimmed.slice(trimmed.length - overlap);
  // Latin text: start after the first whitespace in the window, so the first word is whole.
  const space = window.search(/\s/);
  if (space >= 0 && space < window.length - 1) return window.slice(space).trimStart();
  // CJK text: start after sentence punctuation, else at a character boundary.
  const stop = window.search(/[。！？!?]/);
  if (stop >= 0 && stop < window.length - 1) return window.slice(stop + 1);
  return isCjk(window) ? dropLeadingLowSurrogate(window) : '';
}

const SENTENCE = /[^.!?。！？]*(?:[.!?](?=\s|$)|[。！？])+\s*|[^.!?。！？]+$|[^.!?。！？]*[.!?]+(?=\S)/gy;

/** Splits a paragraph over `max` into pieces of at most `max`: sentences, then words, then characters. */
function splitLong(paragraph: string, max: number): string[] {
  const out: string[] = [];
  let current = '';
  const push = (unit: string) => {
    if (current.length + unit.length <= max) {
      current += unit;
      return;
    }
    if (current) out.push(current);
    current = unit;
  };
  for (const sentence of sentencesOf(paragraph)) {
    if (sentence.length <= max) {
      push(sentence);
      continue;
    }
    for (const word of sentence.match(/\S+\s*|\s+/g) ?? []) {
      if (word.length <= max) {
        push(word);
        continue;
      }
      // A run without spaces longer than a chunk: CJK text, or one giant token (a URL, base64); only
      // here is there no word boundary to respect, so cut at code-point boundaries.
      for (const piece of codePointSlices(word, max)) push(piece);
    }
  }
  if (current) out.push(current);
  return out;
}

function sentencesOf(paragraph: string): string[] {
  const out: string[] = [];
  SENTENCE.lastIndex = 0;
  let guard = paragraph.length + 1;
  while (SENTENCE.lastIndex < paragraph.length && guard-- > 0) {
    const start = SENTENCE.lastIndex;
    const match = SENTENCE.exec(paragraph);
    if (!match || match[0] === '') {
      out.push(paragraph.slice(start));
      break;
    }
    out.push(match[0]);
  }
  return out.length ? out : [paragraph];
}

function codePointSlices(text: string, max: number): string[] {
  const out: string[] = [];
  let current = '';
  for (const ch of text) {
    if (current.length + ch.length > max) {
      out.push(current);
      current = '';
    }
    current += ch;
  }
  if (current) out.push(current);
  return out;
}

function isCjk(text: string): boolean {
  return /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u.test(text);
}

function dropLeadingLowSurrogate(text: string): string {
  const first = text.charCodeAt(0);
  return first >= 0xdc00 && first <= 0xdfff ? text.slice(1) : text;
}
