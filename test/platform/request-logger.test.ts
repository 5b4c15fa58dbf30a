import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { requestLogger } from '../../src/platform/request-logger.js';

function capture(level: string) {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { logger: pino({ level }, stream), lines };
}

describe('request logger (childLoggerFactory)', () => {
  it('writes what the eager child would, with the request id bound', () => {
    const { logger, lines } = capture('info');
    const log = requestLogger(logger, { reqId: 'r-1' }, {});
    log.info({ n: 1 }, 'hello');
    log.error('boom');
    expect(lines.map((l) => [l.reqId, l.msg, l.level])).toEqual([['r-1', 'hello', 30], ['r-1', 'boom', 50]]);
    expect(lines[0].n).toBe(1);
  });

  it('builds no child while nothing is logged at an enabled level', () => {
    const { logger, lines } = capture('warn');
    const child = vi.spyOn(logger, 'child');
    const log = requestLogger(logger, { reqId: 'r-2' }, {});
    log.info('ignored');
    log.debug('ignored');
    expect(child).not.toHaveBeenCalled();
    expect(log.level).toBe('warn');
    log.warn('kept');
    expect(child).toHaveBeenCalledTimes(1);
    log.warn('kept again');
    expect(child).toHaveBeenCalledTimes(1);
    expect(lines.map((l) => l.msg)).toEqual(['kept', 'kept again']);
  });

  it('children and level changes go to the real child', () => {
    const { logger, lines } = capture('info');
    const log = requestLogger(logger, { reqId: 'r-3' }, {});
    log.child({ job: 'x' }).info('nested');
    log.level = 'error';
    log.info('dropped');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ reqId: 'r-3', job: 'x', msg: 'nested' });
  });

  it('a route with its own level gets its child at once', () => {
    const { logger, lines } = capture('info');
    const log = requestLogger(logger, { reqId: 'r-4' }, { level: 'error' });
    log.info('dropped');
    log.error('kept');
    expect(lines.map((l) => l.msg)).toEqual(['kept']);
  });
});
