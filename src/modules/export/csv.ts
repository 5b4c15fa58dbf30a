/**
 * CSV per RFC 4180 with CRLF line endings. Spec rule 3: a text cell starting with `=`, `+`, `-`, `@`, tab or
 * carriage return is prefixed with a single quote, so a spreadsheet opening the file does not run it as a formula;
 * numbers and booleans are written as they are (a negative number is data, not a formula).
 */
export type Cell = string | number | boolean | null;

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

export function csvCell(value: Cell): string {
  if (value === null) return '';
  if (typeof value !== 'string') return String(value);
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvLine(cells: readonly Cell[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}
