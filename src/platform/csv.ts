/**
 * CSV per RFC 4180 with CRLF line endings, for every CSV the API writes (export, compliance). Spec rule 3: a text
 * cell starting with `=`, `+`, `-`, `@`, tab or carriage return is prefixed with a single quote, so a spreadsheet
 * opening the file does not run it as a formula (OWASP CSV injection advice); numbers and booleans are written as
 * they are (a negative number is data, not a formula); an object or array is written as its JSON; null and
 * undefined are empty cells.
 */
export type Cell = string | number | boolean | null;

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  let text: string;
  if (typeof value === 'string') text = FORMULA_START.test(value) ? `'${value}` : value;
  else text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvLine(cells: readonly unknown[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}
