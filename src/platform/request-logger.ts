import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, Level, Logger } from 'pino';

type LogMethod = (...args: unknown[]) => void;

/**
 * A request's logger (`request.log`) that builds its pino child, the request id bound, only when the request logs
 * something at an enabled level. Most requests log nothing at the configured level, and a pino child per request
 * costs microseconds on the hot routes (flag evaluation, assignment, ingestion); what a request does log is exactly
 * what the eager child would have written.
 */
class LazyRequestLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private real(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }

  private write(level: Level, args: unknown[]): void {
    if (this.made === undefined && !(this.parent as Logger).isLevelEnabled(level)) return;
    (this.real()[level] as LogMethod)(...args);
  }

  get level(): string {
    return (this.made ?? this.parent).level;
  }

  set level(level: string) {
    this.real().level = level;
  }

  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }

  error(...args: unknown[]): void {
    this.write('error', args);
  }

  warn(...args: unknown[]): void {
    this.write('warn', args);
  }

  info(...args: unknown[]): void {
    this.write('info', args);
  }

  debug(...args: unknown[]): void {
    this.write('debug', args);
  }

  trace(...args: unknown[]): void {
    this.write('trace', args);
  }

  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real().child(bindings, options);
  }
}

/**
 * Fastify's `childLoggerFactory`. A route with its own log level or serializers gets its pino child at once (the
 * options change what the child writes).
 */
export function requestLogger(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  if (Object.keys(options).length > 0) return parent.child(bindings, options);
  return new LazyRequestLogger(parent, bindings, options) as unknown as FastifyBaseLogger;
}
