/**
 * A Server-Sent Events parser (the WHATWG event-stream format) fed with decoded text chunks. EventSource cannot send
 * the X-API-Key header (nor the dashboard's bearer token), so the clients read the stream through fetch and parse it
 * here: the SDK's ruleset stream and the dashboard's audit stream (web/src/features/audit-logs/hooks.ts imports this
 * file from its source) share this one parser.
 */
export interface SseEvent {
  event: string;
  data: string;
  /** The stream's last event id after this event (ids persist across events, as in EventSource). */
  id: string | undefined;
}

export class SseParser {
  private buffer = '';
  private event = '';
  private data: string[] = [];
  private lastId: string | undefined;
  /** The `retry:` the server asked for, in milliseconds. */
  retryMs: number | undefined;

  constructor(private readonly dispatch: (event: SseEvent) => void) {}

  push(chunk: string): void {
    this.buffer += chunk;
    let start = 0;
    for (;;) {
      const lf = this.buffer.indexOf('\n', start);
      const cr = this.buffer.indexOf('\r', start);
      let end = lf < 0 ? cr : cr < 0 ? lf : Math.min(lf, cr);
      if (end < 0) break;
      // A CR at the end of the chunk may be the first half of CRLF: wait for the next chunk to tell.
      if (end === cr && cr === this.buffer.length - 1) break;
      const line = this.buffer.slice(start, end);
      if (end === cr && this.buffer[cr + 1] === '\n') end += 1;
      start = end + 1;
      this.line(line);
    }
    this.buffer = this.buffer.slice(start);
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length > 0) this.dispatch({ event: this.event || 'message', data: this.data.join('\n'), id: this.lastId });
      this.event = '';
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'id' && !value.includes('\0')) this.lastId = value;
    else if (field === 'retry' && /^\d+$/.test(value)) this.retryMs = Number(value);
  }
}
