import { describe, expect, it } from 'vitest';
import { chunks, parseIdCsv } from './csv';

describe('parseIdCsv', () => {
  it('takes the first column, skips a header, blanks and repeats', () => {
    expect(parseIdCsv('user_id,plan\nu1,pro\n\nu2,free\r\nu1,pro\n  u3  \n')).toEqual({ ids: ['u1', 'u2', 'u3'], tooLong: 0 });
  });

  it('unquotes quoted cells, keeping commas and doubled quotes inside them', () => {
    expect(parseIdCsv('"a,b",x\n"say ""hi""",y\nplain;z\ntab\tw').ids).toEqual(['a,b', 'say "hi"', 'plain', 'tab']);
  });

  it('keeps a first row that is not a header, and counts IDs too long for the API', () => {
    expect(parseIdCsv(`first\n${'x'.repeat(256)}\n${'y'.repeat(255)}`)).toEqual({ ids: ['first', 'y'.repeat(255)], tooLong: 1 });
  });

  it('splits into requests of at most the given size', () => {
    expect(chunks([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(chunks([], 2)).toEqual([]);
  });
});
