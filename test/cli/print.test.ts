import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createPrinter, printable } from '../../src/cli/print.js';

/** What a terminal may act on: C0, DEL, C1, line/paragraph separators, bidi marks, overrides and isolates. */
const ACTS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
const dangerous = fc.constantFrom(
  '\u001b', '\u001b[2J', '\u001b]0;title\u0007', '\u009b31m', '\u0090q\u009c', '\u007f', '\r', '\n', '\t', '\u0000',
  '\u0085', '\u2028', '\u2029', '\u202e', '\u2066', '\u2069', '\u200f', '\u061c', '\b',
);
const mixed = fc.array(fc.oneof(dangerous, fc.string({ unit: 'binary', maxLength: 6 })), { maxLength: 12 }).map((parts) => parts.join(''));

describe('printable', () => {
  it('escapes ESC and CSI sequences, C0, DEL, C1, line separators and bidi overrides as \\uXXXX', () => {
    expect(printable('a\u001b[2Jb')).toBe('a\\u001b[2Jb');
    expect(printable('\u009b31m\u007f\u0085')).toBe('\\u009b31m\\u007f\\u0085');
    expect(printable('x\u2028y\u2029z')).toBe('x\\u2028y\\u2029z');
    expect(printable('\u202egnp.exe')).toBe('\\u202egnp.exe');
    expect(printable('tab\there\r\nnext')).toBe('tab\\u0009here\\u000d\\u000anext');
  });

  it('keeps tabs, LF and CRLF in a document, but not a lone CR', () => {
    expect(printable('a,b\r\nc\td\ne', { document: true })).toBe('a,b\r\nc\td\ne');
    expect(printable('secret\rfake', { document: true })).toBe('secret\\u000dfake');
    expect(printable('\u001b[1m\n', { document: true })).toBe('\\u001b[1m\n');
  });

  it('leaves any other text alone: letters, emoji, combining marks, right-to-left scripts', () => {
    for (const text of ['Grüße 👋🏽', 'e\u0301', 'שלום', 'مرحبا', 'a\\u001b']) expect(printable(text)).toBe(text);
  });

  it('property: the result holds nothing a terminal acts on, and text without such characters is unchanged', () => {
    fc.assert(
      fc.property(mixed, (text) => {
        const out = printable(text);
        expect(out).not.toMatch(ACTS);
        if (!ACTS.test(text)) expect(out).toBe(text);
        const doc = printable(text, { document: true });
        expect(doc.replace(/\r\n|\n|\t/g, '')).not.toMatch(ACTS);
      }),
      { seed: 20261127, numRuns: 500 },
    );
  });

  it('property: a JSON document printed as a document parses to the same value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.array(mixed, { maxLength: 3 }), (value, strings) => {
        const doc = JSON.stringify({ value, strings }, null, 2);
        expect(JSON.parse(printable(doc, { document: true }))).toEqual(JSON.parse(doc));
      }),
      { seed: 20261127, numRuns: 300 },
    );
  });
});

describe('the printer', () => {
  const capture = () => {
    const written = { out: '', err: '' };
    return { written, print: createPrinter({ out: (t) => { written.out += t; }, err: (t) => { written.err += t; } }) };
  };

  it('aligns table columns on the escaped cells, one line per row whatever the cells hold', () => {
    const { written, print } = capture();
    print.table([['KEY', 'NAME'], ['a\nb', 'x'], ['long-key', '\u001b[31mred']]);
    expect(written.out).toBe('KEY       NAME\na\\u000ab  x\nlong-key  \\u001b[31mred\n');
  });

  it('escapes line and error messages, line breaks included, and ends each with one newline', () => {
    const { written, print } = capture();
    print.line('flag \u001b]0;owned\u0007 is on\nFAKE LINE');
    print.error('uplift: \u009b2J');
    expect(written).toEqual({ out: 'flag \\u001b]0;owned\\u0007 is on\\u000aFAKE LINE\n', err: 'uplift: \\u009b2J\n' });
  });
});
