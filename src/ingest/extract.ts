// Turns one file into text: plain text and Markdown as they are, HTML through html-to-text, PDF through
// pdfjs-dist's legacy build (pure JavaScript, no worker thread, no network). Anything else, or a file that
// does not decode, is skipped with a one-line reason: the caller reports it and carries on.
import { readFile, stat } from 'node:fs/promises';
import { extname } from 'node:path';

/** Largest file read; a bigger one is skipped before it is read. */
export const INGEST_MAX_FILE_BYTES = 32 * 1024 * 1024;

export type DocumentFormat = 'text' | 'markdown' | 'html' | 'pdf';

const FORMAT_BY_EXTENSION: Record<string, DocumentFormat> = {
  '.txt': 'text',
  '.text': 'text',
  '.md': 'markdown',
  '.markdown': 'markdown',
  '.mdx': 'markdown',
  '.html': 'html',
  '.htm': 'html',
  '.xhtml': 'html',
  '.pdf': 'pdf',
};

export type Extracted = { ok: true; format: DocumentFormat; text: string } | { ok: false; reason: string };

/** The format a path would be read as, or undefined when ingest does not read that kind of file. */
export function formatOf(path: string): DocumentFormat | undefined {
  return FORMAT_BY_EXTENSION[extname(path).toLowerCase()];
}

export async function extractFile(path: string): Promise<Extracted> {
  const format = formatOf(path);
  if (!format)
    return { ok: false, reason: `not a text, Markdown, HTML or PDF file (${extname(path) || 'no extension'})` };
  let bytes: Uint8Array;
  try {
    const info = await stat(path);
    if (!info.isFile()) return { ok: false, reason: 'not a regular file' };
    if (info.size > INGEST_MAX_FILE_BYTES)
      return { ok: false, reason: `larger than ${INGEST_MAX_FILE_BYTES} bytes (${info.size})` };
    bytes = await readFile(path);
  } catch (error) {
    return { ok: false, reason: `unreadable (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})` };
  }
  return extractBytes(bytes, format);
}

export async function extractBytes(bytes: Uint8Array, format: DocumentFormat): Promise<Extracted> {
  try {
    if (format === 'pdf') return { ok: true, format, text: await pdfText(bytes) };
    const text = decodeUtf8(bytes);
    if (text === undefined) return { ok: false, reason: 'binary or not UTF-8' };
    return { ok: true, format, text: format === 'html' ? await htmlText(text) : text };
  } catch (error) {
    return { ok: false, reason: `cannot read as ${format}: ${oneLine((error as Error).message)}` };
  }
}

function decodeUtf8(bytes: Uint8Array): string | undefined {
  // A NUL byte is the classic sign of a binary file that happens to carry a text extension.
  if (bytes.includes(0)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return undefined;
  }
}

async function htmlText(html: string): Promise<string> {
  const { convert } = await import('html-to-text');
  return convert(html, {
    wordwrap: false,
    selectors: [
      // Links and images would add URLs that only dilute the embedding and the keyword index.
      { selector: 'a', options: { ignoreHref: true } },
      { selector: 'img', format: 'skip' },
      // Headings keep their case and become Markdown-like lines, so the chunker can split at them.
      ...[1, 2, 3, 4, 5, 6].map((n) => ({
        selector: `h${n}`,
        format: 'blockString',
        options: { uppercase: false, leadingLineBreaks: 2, trailingLineBreaks: 2 },
      })),
    ],
    formatters: {
      blockString: (elem, walk, builder, options) => {
        builder.openBlock({ leadingLineBreaks: options.leadingLineBreaks ?? 2 });
        builder.addInline(`${'#'.repeat(Number(elem.name?.slice(1) ?? 1))} `);
        walk(elem.children, builder);
        builder.closeBlock({ trailingLineBreaks: options.trailingLineBreaks ?? 2 });
      },
    },
  });
}

/** Text of every page, pages separated by a blank line so each page starts a new paragraph. */
async function pdfText(bytes: Uint8Array): Promise<string> {
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  const task = pdfjs.getDocument({
    // pdf.js takes ownership of (and detaches) the buffer it is given.
    data: new Uint8Array(bytes),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: true,
    verbosity: 0,
  });
  try {
    const doc = await task.promise;
    const pages: string[] = [];
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      let line = '';
      const lines: string[] = [];
      for (const item of content.items) {
        if (!('str' in item)) continue;
        line += item.str;
        if (item.hasEOL) {
          lines.push(line);
          line = '';
        }
      }
      if (line) lines.push(line);
      pages.push(lines.join('\n'));
      page.cleanup();
    }
    return pages.join('\n\n');
  } finally {
    await task.destroy();
  }
}

function oneLine(message: string): string {
  return message.replace(/\s+/g, ' ').slice(0, 200);
}
