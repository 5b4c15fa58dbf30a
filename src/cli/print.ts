/**
 * Everything the CLI prints goes through `printable`: values come from the API (flag names, error messages, export
 * files) and from the command line, and a terminal acts on some characters instead of showing them. An ESC or C1
 * sequence can move the cursor, retitle the window, rewrite what was printed or (on some terminals) answer back as
 * if typed; a carriage return or line separator can overwrite a line; a bidi override can show text in another
 * order than it runs. Each such character is printed as its `\uXXXX` escape, which is also valid inside a JSON
 * string, so a JSON document printed this way still parses to the same value.
 */

/** C0 and C1 controls, DEL, line and paragraph separators, bidi marks, embeddings, overrides and isolates. */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
/** The same, but a document keeps its tabs and line breaks (LF, CRLF); a lone CR would overwrite its line. */
const UNSAFE_IN_DOCUMENT = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]|\r(?!\n)/g;

const escape = (char: string) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** `text` with every character a terminal could act on escaped; `document` keeps tabs, LF and CRLF. */
export function printable(text: string, opts: { document?: boolean } = {}): string {
  return text.replace(opts.document ? UNSAFE_IN_DOCUMENT : UNSAFE, escape);
}

export interface Printer {
  /** One line: a message whose values are escaped, line breaks in them included. */
  line(text: string): void;
  /** A document (an export file, JSON, help text): its own line structure is kept. */
  document(text: string): void;
  /** Aligned columns; every cell is one line. */
  table(rows: string[][]): void;
  /** One line on standard error. */
  error(text: string): void;
  /** Text from the argument parser (help, usage errors), to standard output or error. */
  parserOut(text: string): void;
  parserErr(text: string): void;
}

export function createPrinter(io: { out(text: string): void; err(text: string): void }): Printer {
  return {
    line: (text) => io.out(`${printable(text)}\n`),
    document: (text) => io.out(printable(text, { document: true })),
    table(rows) {
      const cells = rows.map((r) => r.map((cell) => printable(cell)));
      const widths = cells[0].map((_, i) => Math.max(...cells.map((r) => r[i].length)));
      io.out(cells.map((r) => r.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd()).join('\n') + '\n');
    },
    error: (text) => io.err(`${printable(text)}\n`),
    parserOut: (text) => io.out(printable(text, { document: true })),
    parserErr: (text) => io.err(printable(text, { document: true })),
  };
}
