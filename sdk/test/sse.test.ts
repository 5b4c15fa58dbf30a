import { describe, expect, it } from 'vitest';
import { SseParser, type SseEvent } from '../src/sse.js';

const parse = (chunks: string[]) => {
  const events: SseEvent[] = [];
  const parser = new SseParser((e) => events.push(e));
  for (const c of chunks) parser.push(c);
  return { events, parser };
};

describe('SseParser', () => {
  it('dispatches events on a blank line, joining data lines, skipping comments, keeping the last id', () => {
    const { events, parser } = parse([': hello\nretry: 1500\nevent: ruleset\nid: v1\ndata: {"a":\ndata:1}\n\ndata: plain\n\n']);
    expect(events).toEqual([
      { event: 'ruleset', data: '{"a":\n1}', id: 'v1' },
      { event: 'message', data: 'plain', id: 'v1' },
    ]);
    expect(parser.retryMs).toBe(1500);
  });

  it('handles CRLF and CR line ends, also split between chunks', () => {
    // A CR ending a chunk may be half of a CRLF: the line ends when the next chunk starts.
    const { events } = parse(['event: a\r', '\ndata: 1\r\n\r', '\nevent: b\rdata: 2\r\r', ': next\n']);
    expect(events).toEqual([
      { event: 'a', data: '1', id: undefined },
      { event: 'b', data: '2', id: undefined },
    ]);
  });

  it('does not dispatch an event without data, or a partial one', () => {
    expect(parse(['event: x\n\n', 'data: half']).events).toEqual([]);
  });

  it('joins an event split anywhere across chunks, inside a field name or a value', () => {
    const text = 'retry: 3000\n: connected\n\nid: 7\ndata: {"a":1}\n\n: heartbeat\n\nid: 8\nevent: entry\ndata: {"a":2}\n\n';
    const whole = parse([text]).events;
    expect(whole).toEqual([
      { event: 'message', data: '{"a":1}', id: '7' },
      { event: 'entry', data: '{"a":2}', id: '8' },
    ]);
    for (let cut = 1; cut < text.length; cut++) {
      const { events, parser } = parse([text.slice(0, cut), text.slice(cut)]);
      expect(events).toEqual(whole);
      expect(parser.retryMs).toBe(3000);
    }
    // One character at a time.
    expect(parse([...text]).events).toEqual(whole);
  });

  it('joins data lines with LF whatever the line ends, and keeps a data line\'s other colons and spaces', () => {
    expect(parse(['data: one\r\ndata:two\rdata:  three: 3\ndata\n\n']).events).toEqual([
      { event: 'message', data: 'one\ntwo\n three: 3\n', id: undefined },
    ]);
  });

  it('skips comments and unknown fields, wherever they are in an event', () => {
    expect(parse([':first\ndata: a\n: between\nfoo: bar\ndata: b\n:\n\n']).events).toEqual([{ event: 'message', data: 'a\nb', id: undefined }]);
  });

  it('keeps the last id across events until another is sent, an empty id clears it, an id with NUL is ignored', () => {
    expect(parse(['id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\nid: 2\u0000x\ndata: d\n\nid: 3\n\ndata: e\n\n']).events).toEqual([
      { event: 'message', data: 'a', id: '1' },
      { event: 'message', data: 'b', id: '1' },
      { event: 'message', data: 'c', id: '' },
      { event: 'message', data: 'd', id: '' },
      // An id in an event without data is kept for the next one (as the server's OFREP stream sends it).
      { event: 'message', data: 'e', id: '3' },
    ]);
  });

  it('takes retry only as digits, and the event type resets after each event', () => {
    const { events, parser } = parse(['retry: 100\nretry: soon\nretry: 1e3\nevent: x\ndata: 1\n\ndata: 2\n\n']);
    expect(parser.retryMs).toBe(100);
    expect(events.map((e) => e.event)).toEqual(['x', 'message']);
  });
});
