import { describe, expect, it } from 'vitest';
import { createSseParser } from './sse';

describe('createSseParser', () => {
  it('joins messages split across chunks and skips comments and retry hints', () => {
    const parse = createSseParser();
    expect(parse('retry: 3000\n: connected\n\nid: 7\nda')).toEqual([]);
    expect(parse('ta: {"a":1}\n\n: heartbeat\n\nid: 8\ndata: {"a":2}\n\n')).toEqual([
      { id: '7', data: '{"a":1}' },
      { id: '8', data: '{"a":2}' },
    ]);
  });

  it('handles CRLF line ends and multi-line data', () => {
    const parse = createSseParser();
    expect(parse('event: x\r\ndata: one\r\ndata: two\r\n\r\n')).toEqual([{ event: 'x', data: 'one\ntwo' }]);
  });
});
