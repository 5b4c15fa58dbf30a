/**
 * OpenTelemetry tracing, off unless OTEL_EXPORTER_OTLP_ENDPOINT is set. Spans for every HTTP request (with the
 * request id as `uplift.request_id`), every database statement (node-postgres and PGlite) and every outbound HTTP
 * call (fetch through undici's diagnostics channels, node:http through its own), exported over OTLP/HTTP in
 * batches. Started once per process before the app is built (main.ts); the request hooks come from `tracingPlugin`.
 */
import { subscribe } from 'node:diagnostics_channel';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { PGlite } from '@electric-sql/pglite';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, propagation, trace, type Span } from '@opentelemetry/api';
import { isTracingSuppressed } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace-node';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import pg from 'pg';

export interface Tracing {
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

const TRACER = 'uplift';
const MAX_STATEMENT_CHARS = 2_000;
const tracer = () => trace.getTracer(TRACER);

/** Starts the tracer provider (global), the database and outbound-call instrumentation. */
export function startTracing(settings: { endpoint: string; serviceName: string }, exporter?: SpanExporter): Tracing {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName }),
    spanProcessors: [new BatchSpanProcessor(exporter ?? new OTLPTraceExporter({ url: `${settings.endpoint.replace(/\/+$/, '')}/v1/traces` }))],
  });
  provider.register();
  instrumentDatabase();
  instrumentOutboundCalls();
  return { forceFlush: () => provider.forceFlush(), shutdown: () => provider.shutdown() };
}

/** `SELECT`, `INSERT`, … : the span name of a statement (never its values). */
function operationOf(text: string): string {
  return /^\s*(?:\/\*.*?\*\/\s*)?([A-Za-z]+)/.exec(text)?.[1]?.toUpperCase() ?? 'QUERY';
}

function statementSpan(system: string, text: string): Span {
  return tracer().startSpan(`${operationOf(text)}`, {
    kind: SpanKind.CLIENT,
    attributes: { 'db.system.name': system, 'db.query.text': text.slice(0, MAX_STATEMENT_CHARS) },
  });
}

function endStatement(span: Span, error?: unknown): void {
  if (error) {
    span.recordException(error as Error);
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

/**
 * Runs a statement inside its span and ends the span when the statement settles. node-postgres has two shapes:
 * `query(text, values?)` answers a promise, while `query(text, values, callback)` (what pg.Pool.query, so Drizzle
 * outside a transaction, calls) answers nothing and reports through the callback. For the second the callback is
 * wrapped, or the span would end when the statement is sent rather than when it finishes, and with status OK.
 */
function runStatement(span: Span, original: (...args: unknown[]) => unknown, self: unknown, args: unknown[]): unknown {
  const last = args.length - 1;
  const callback = args[last];
  if (typeof callback === 'function') {
    let ended = false;
    args = [...args];
    args[last] = function (this: unknown, error: unknown, ...rest: unknown[]) {
      if (!ended) {
        ended = true;
        endStatement(span, error);
      }
      return (callback as (...a: unknown[]) => unknown).call(this, error, ...rest);
    };
  }
  let result: unknown;
  try {
    result = context.with(trace.setSpan(context.active(), span), () => original.apply(self, args));
  } catch (error) {
    endStatement(span, error);
    throw error;
  }
  if (typeof callback === 'function') return result;
  if (result && typeof (result as { then?: unknown }).then === 'function') {
    (result as Promise<unknown>).then(
      () => endStatement(span),
      (error: unknown) => endStatement(span, error ?? new Error('statement failed')),
    );
  } else span.end();
  return result;
}

const patched = Symbol.for('uplift.tracing.patched');

type QueryMethod = ((...args: unknown[]) => unknown) & { [patched]?: boolean };

/** Replaces `owner[method]` with one that opens a span per statement; parameter values are never recorded. */
function wrapQueryMethod<T extends object>(owner: T, method: keyof T & string, system: string): void {
  const original = owner[method] as unknown as QueryMethod;
  if (typeof original !== 'function' || original[patched]) return;
  const wrapped = function (this: unknown, ...args: unknown[]) {
    const first = args[0] as string | { text?: string } | undefined;
    const text = typeof first === 'string' ? first : first?.text;
    if (typeof text !== 'string' || isTracingSuppressed(context.active())) return original.apply(this, args);
    return runStatement(statementSpan(system, text), original, this, args);
  };
  Object.assign(wrapped, { [patched]: true });
  (owner as Record<string, unknown>)[method] = wrapped;
}

/** Wraps the query methods every statement goes through. */
function instrumentDatabase(): void {
  wrapQueryMethod(pg.Client.prototype, 'query', 'postgresql');
  wrapQueryMethod(PGlite.prototype, 'query', 'postgresql');
  wrapQueryMethod(PGlite.prototype, 'exec', 'postgresql');
  // PGlite's transaction() hands its callback a `tx` whose query and exec call PGlite's private methods, not the
  // prototype's: every statement of a transaction (Drizzle's db.transaction) would go untraced. Each tx is wrapped.
  const transaction = PGlite.prototype.transaction as QueryMethod;
  if (transaction[patched]) return;
  const wrapped = function (this: PGlite, callback: (tx: Record<string, unknown>) => Promise<unknown>) {
    return transaction.call(this, (tx: Record<string, unknown>) => {
      wrapQueryMethod(tx, 'query', 'postgresql');
      wrapQueryMethod(tx, 'exec', 'postgresql');
      return callback(tx);
    });
  };
  Object.assign(wrapped, { [patched]: true });
  PGlite.prototype.transaction = wrapped as unknown as typeof PGlite.prototype.transaction;
}

function outboundSpan(method: string, url: URL): Span {
  return tracer().startSpan(`${method} ${url.host}`, {
    kind: SpanKind.CLIENT,
    attributes: {
      'http.request.method': method,
      'server.address': url.hostname,
      'server.port': Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
      // The path only: query strings can carry tokens.
      'url.full': `${url.origin}${url.pathname}`,
    },
  });
}

function endOutbound(span: Span, status: number | undefined, error?: unknown): void {
  if (status !== undefined) span.setAttribute('http.response.status_code', status);
  if (error !== undefined) span.recordException(error as Error);
  if (error !== undefined || (status ?? 0) >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

let outboundInstrumented = false;

function instrumentOutboundCalls(): void {
  if (outboundInstrumented) return;
  outboundInstrumented = true;
  // fetch (undici): LLM, chat webhooks, identity provider.
  const undiciSpans = new WeakMap<object, Span>();
  interface UndiciRequest { origin: string; path: string; method: string; addHeader(name: string, value: string): void }
  subscribe('undici:request:create', (message) => {
    if (isTracingSuppressed(context.active())) return;
    const { request } = message as { request: UndiciRequest };
    const span = outboundSpan(request.method, new URL(request.path, request.origin));
    undiciSpans.set(request, span);
    const carrier: Record<string, string> = {};
    propagation.inject(trace.setSpan(context.active(), span), carrier);
    for (const [name, value] of Object.entries(carrier)) request.addHeader(name, value);
  });
  subscribe('undici:request:headers', (message) => {
    const { request, response } = message as { request: object; response: { statusCode: number } };
    const span = undiciSpans.get(request);
    if (span) endOutbound(span, response.statusCode);
    undiciSpans.delete(request);
  });
  subscribe('undici:request:error', (message) => {
    const { request, error } = message as { request: object; error: unknown };
    const span = undiciSpans.get(request);
    if (span) endOutbound(span, undefined, error);
    undiciSpans.delete(request);
  });
  // node:http and node:https (the AWS SDK, nodemailer's HTTP transports).
  subscribe('http.client.request.start', (message) => {
    if (isTracingSuppressed(context.active())) return;
    const { request } = message as { request: ClientRequest };
    const url = new URL(request.path, `${request.protocol}//${request.host}`);
    const span = outboundSpan(request.method, url);
    let ended = false;
    const end = (status: number | undefined, error?: unknown) => {
      if (ended) return;
      ended = true;
      endOutbound(span, status, error);
    };
    request.once('response', (response: IncomingMessage) => end(response.statusCode));
    request.once('error', (error) => end(undefined, error));
    request.once('close', () => end(undefined));
  });
}

const SPAN = Symbol('uplift.span');
type TracedRequest = FastifyRequest & { [SPAN]?: Span };

/** A server span per request, the parent of the statements and calls made while answering it. */
const plugin: FastifyPluginAsync = async (app) => {
  app.addHook('onRequest', (request, reply, done) => {
    const parent = propagation.extract(ROOT_CONTEXT, request.headers);
    const route = request.routeOptions.url;
    const span = tracer().startSpan(route ? `${request.method} ${route}` : request.method, {
      kind: SpanKind.SERVER,
      attributes: {
        'http.request.method': request.method,
        'url.path': request.url.split('?', 1)[0],
        'uplift.request_id': request.id,
        ...(route ? { 'http.route': route } : {}),
      },
    }, parent);
    (request as TracedRequest)[SPAN] = span;
    // Hijacked streams never reach onResponse: their span ends when the response closes.
    reply.raw.once('close', () => endServerSpan(span, reply.raw.statusCode));
    context.with(trace.setSpan(parent, span), done);
  });
  app.addHook('onResponse', (request, reply, done) => {
    const span = (request as TracedRequest)[SPAN];
    if (span) endServerSpan(span, reply.statusCode);
    done();
  });
};

function endServerSpan(span: Span, status: number): void {
  if (!span.isRecording()) return;
  span.setAttribute('http.response.status_code', status);
  if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

export const tracingPlugin = fp(plugin, { name: 'uplift-tracing' });
