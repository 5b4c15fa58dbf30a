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
});
