export interface SseMessage {
  id?: string;
  event?: string;
  data: string;
}

/**
 * An incremental server-sent-events parser (the WHATWG rules the dashboard needs): feed it text as it arrives, get
 * back the complete messages. Comments (`: heartbeat`) and `retry:` lines are skipped.
 */
export function createSseParser(): (chunk: string) => SseMessage[] {
  let buffer = '';
  return (chunk) => {
    buffer += chunk;
    const messages: SseMessage[] = [];
    let end: number;
    while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + (buffer[end] === '\r' ? 4 : 2));
      const message: SseMessage = { data: '' };
      const data: string[] = [];
      for (const line of block.split(/\r?\n/)) {
        if (line === '' || line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') data.push(value);
        else if (field === 'id') message.id = value;
        else if (field === 'event') message.event = value;
      }
      if (data.length > 0) messages.push({ ...message, data: data.join('\n') });
    }
    return messages;
  };
}
