import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing, type Tracing } from '../../src/platform/tracing.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

interface Received { url: string; headers: http.IncomingHttpHeaders; body: string }

async function server(answer: (req: Received) => { status: number; body: unknown }) {
  const received: Received[] = [];
  const srv = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = { url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(r);
      const { status, body } = answer(r);
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`,
    received,
    close: () => new Promise<void>((resolve) => { srv.closeAllConnections(); srv.close(() => resolve()); }),
  };
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: { stringValue?: string; intValue?: string | number } }>;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  status?: { code?: number };
}

/** OTLP's STATUS_CODE_ERROR. */
const STATUS_ERROR = 2;
const durationMs = (span: OtlpSpan) => Number(BigInt(span.endTimeUnixNano) - BigInt(span.startTimeUnixNano)) / 1e6;

const attr = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value?.stringValue ?? (value?.intValue === undefined ? undefined : Number(value.intValue));
};

const DESIGN = JSON.stringify({
  name: 'One-page checkout', hypothesis: 'If checkout fits on one page, more buyers finish, because nothing hides the next step.',
  description: 'Collapse checkout.', variants: [{ name: 'current', description: 'Today' }, { name: 'one_page', description: 'Single page' }],
  rationale: ['Drop-off.'],
});

describe('OpenTelemetry tracing (OTLP/HTTP)', () => {
  let collector: Awaited<ReturnType<typeof server>>;
  let llm: Awaited<ReturnType<typeof server>>;
  let tracing: Tracing;
  let t: TestApp;
  let viewer: TestUser;

  beforeAll(async () => {
    collector = await server(() => ({ status: 200, body: {} }));
    llm = await server(() => ({ status: 200, body: { choices: [{ message: { role: 'assistant', content: DESIGN } }] } }));
    tracing = startTracing({ endpoint: collector.url, serviceName: 'uplift-test' });
    t = await testApp({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, LLM_API_URL: `${llm.url}/v1`, LLM_API_KEY: 'sk-test' } });
    viewer = await t.user();
  });
  /** Every span exported so far. */
  const exported = async (): Promise<OtlpSpan[]> => {
    await tracing.forceFlush();
    return collector.received
      .filter((r) => r.url === '/v1/traces')
      .flatMap((r) => JSON.parse(r.body).resourceSpans.flatMap((rs: { scopeSpans: Array<{ spans: OtlpSpan[] }> }) => rs.scopeSpans.flatMap((ss) => ss.spans)));
  };
  const statementSpans = async (text: string) => (await exported()).filter((s) => attr(s, 'db.query.text') === text);
  afterAll(async () => {
    await t.close();
    await tracing.shutdown();
    await collector.close();
    await llm.close();
  });

  it('exports a request span with its request id, and the statements and outbound calls it made, in one trace', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const res = await t.inject({
      method: 'POST', url: '/api/v1/ai/design',
      headers: { ...viewer.headers, traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
      payload: { goal: 'More buyers finish checkout' },
    });
    expect(res.statusCode).toBe(200);
    const spans = (await exported()).filter((s) => s.traceId === traceId);
    const request = spans.find((s) => s.name === 'POST /api/v1/ai/design');
    expect(request).toBeDefined();
    expect(attr(request!, 'uplift.request_id')).toBe(res.headers['x-request-id']);
    expect(attr(request!, 'http.route')).toBe('/api/v1/ai/design');
    expect(attr(request!, 'http.response.status_code')).toBe(200);
    expect(request!.parentSpanId).toBe('00f067aa0ba902b7');

    const statements = spans.filter((s) => attr(s, 'db.system.name') === 'postgresql');
    expect(statements.length).toBeGreaterThan(0);
    expect(statements.every((s) => s.parentSpanId === request!.spanId)).toBe(true);
    expect(statements.map((s) => s.name)).toContain('SELECT');

    const outbound = spans.filter((s) => attr(s, 'http.request.method') === 'POST' && s.kind === 3);
    expect(outbound).toHaveLength(1);
    expect(attr(outbound[0], 'url.full')).toBe(`${llm.url}/v1/chat/completions`);
    expect(attr(outbound[0], 'http.response.status_code')).toBe(200);
    // The trace continues in the called service, and the exporter's own calls are not traced.
    expect(llm.received.at(-1)!.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-`));
    expect(spans.some((s) => String(attr(s, 'url.full') ?? '').startsWith(collector.url))).toBe(false);
  });

  it('traces the statements of a transaction, as creating a feature flag runs its insert in one', async () => {
    const developer = await t.user({ role: 'DEVELOPER' });
    const traceId = '5bf92f3577b34da6a3ce929d0e0e4737';
    const res = await t.inject({
      method: 'POST', url: '/api/v1/feature-flags/',
      headers: { ...developer.headers, traceparent: `00-${traceId}-00f067aa0ba902b8-01` },
      payload: { key: t.unique('flag'), name: 'Traced flag' },
    });
    expect(res.statusCode).toBe(201);
    const spans = (await exported()).filter((s) => s.traceId === traceId);
    const request = spans.find((s) => s.name === 'POST /api/v1/feature-flags');
    expect(request).toBeDefined();
    const insert = spans.find((s) => s.name === 'INSERT' && /insert into "feature_flags"/i.test(String(attr(s, 'db.query.text'))));
    expect(insert).toBeDefined();
    expect(insert!.parentSpanId).toBe(request!.spanId);
  });

  // Outside a transaction node-postgres runs statements through pg.Pool.query, which hands the client a callback.
  it.runIf(process.env.TEST_DATABASE_URL)('a pool statement\'s span lasts as long as the statement, and a failed one is an error', async () => {
    const slow = `select pg_sleep(0.05) /* ${t.unique('slow')} */`;
    await t.database.exec(slow);
    const [slept] = await statementSpans(slow);
    expect(slept).toBeDefined();
    expect(durationMs(slept)).toBeGreaterThanOrEqual(50);
    expect(slept.status?.code).not.toBe(STATUS_ERROR);

    const failing = `select 1 / 0 /* ${t.unique('fail')} */`;
    await expect(t.database.exec(failing)).rejects.toThrow(/division by zero/);
    const [failed] = await statementSpans(failing);
    expect(failed).toBeDefined();
    expect(failed.status?.code).toBe(STATUS_ERROR);
  });
});
