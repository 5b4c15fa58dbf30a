import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Uplift, UpliftError, type UpliftEvent } from '../src/index.js';
import { eventStream, FakeService, json, ruleset } from './fake-service.js';

const RULES_US = { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'country', operator: 'equals', value: 'US' }] }] };
const V1 = ruleset([{ key: 'checkout', targeting_rules: RULES_US }, { key: 'old', status: 'archived', is_active: false }]);
const V2 = ruleset([{ key: 'checkout', targeting_rules: null }, { key: 'banner' }]);

let service: FakeService;
let clients: Uplift[] = [];
const client = (options: Partial<ConstructorParameters<typeof Uplift>[0]> = {}) => {
  const c = new Uplift({ baseUrl: 'http://uplift.test/', apiKey: 'key-1', fetch: service.fetch, ...options });
  clients.push(c);
  return c;
};
const events = (c: Uplift) => {
  const seen: UpliftEvent[] = [];
  c.subscribe((e) => seen.push(e));
  return seen;
};

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
  service = new FakeService();
});
afterEach(async () => {
  const open = clients;
  clients = [];
  await Promise.all(open.map((c) => c.close()));
  vi.useRealTimers();
});

describe('evaluation', () => {
  it('answers from a bootstrap at once, without the network', async () => {
    const c = client({ bootstrap: JSON.stringify(V1), updates: 'off' });
    await c.ready();
    expect(c.isEnabled('checkout', 'u1', { country: 'US' })).toBe(true);
    expect(c.isEnabled('checkout', 'u1', { country: 'FR' })).toBe(false);
    expect(c.evaluate('checkout', 'u1', { user: { country: 'US' } })).toEqual({ enabled: true, reason: 'targeting_match', rule: 'country equals US' });
    expect(c.evaluate('old', 'u1')).toEqual({ enabled: false, reason: 'disabled' });
    expect(c.allEnabled('u1', { country: 'US' })).toEqual({ checkout: true });
    expect(service.sent).toEqual([]);
  });

  it('answers false with reason not_found for a key it does not hold, and before any ruleset', () => {
    const c = client({ bootstrap: V1, updates: 'off' });
    expect(c.evaluate('nope', 'u1')).toEqual({ enabled: false, reason: 'not_found' });
    expect(c.isEnabled('nope', 'u1')).toBe(false);
    service.on('GET', '/sdk/ruleset', () => new Promise(() => undefined));
    const empty = client({ updates: 'off' });
    expect(empty.evaluate('checkout', 'u1')).toEqual({ enabled: false, reason: 'not_found' });
    expect(empty.allEnabled('u1')).toEqual({});
  });

  it('answers error for a flag naming an id_list segment (its members are not in the ruleset)', () => {
    const seg = '00000000-0000-4000-8000-00000000aaaa';
    const rules = { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'segment', operator: 'in_segment', value: seg }] }] };
    const c = client({ bootstrap: ruleset([{ key: 'beta', targeting_rules: rules }], [{ id: seg, kind: 'id_list', status: 'active', rules: null, valid: true }]), updates: 'off' });
    expect(c.evaluate('beta', 'u1')).toEqual({ enabled: false, reason: 'error' });
  });

  it('refuses a bootstrap that is not a ruleset it can evaluate', () => {
    expect(() => client({ bootstrap: '{"flags":', updates: 'off' })).toThrow('the ruleset is not JSON');
    expect(() => client({ bootstrap: { ...V1, bucketing: { name: 'murmur3_32', version: 2 } }, updates: 'off' })).toThrow(/bucketing version/);
    expect(() => client({ bootstrap: { ...V1, flags: [{ key: 1 }] } as never, updates: 'off' })).toThrow('flags[0] is not a flag');
  });

  it('checks its options', () => {
    expect(() => client({ apiKey: '' })).toThrow('apiKey is required');
    expect(() => client({ updates: 'push' as never })).toThrow('updates must be');
    expect(() => client({ updates: 'poll', pollSeconds: 0 })).toThrow('pollSeconds must be at least 1');
  });
});

describe('ruleset download and polling', () => {
  it('downloads with the API key, then revalidates with the ETag (304 keeps it) and applies a change', async () => {
    let current = { body: V1, etag: '"v1"' };
    service.on('GET', '/sdk/ruleset', (req) =>
      req.headers['if-none-match'] === current.etag ? new Response(null, { status: 304 }) : json(200, current.body, { etag: current.etag }),
    );
    const c = client({ updates: 'poll', pollSeconds: 5 });
    const seen = events(c);
    await c.ready();
    expect(service.sent[0]).toMatchObject({ method: 'GET', path: '/sdk/ruleset', headers: { 'x-api-key': 'key-1' } });
    expect(c.version).toBe('v1');
    await vi.advanceTimersByTimeAsync(5000);
    expect(service.sent[1].headers['if-none-match']).toBe('"v1"');
    expect(seen).toEqual([{ type: 'ruleset', version: 'v1', changed: ['checkout', 'old'] }]);
    current = { body: V2, etag: '"v2"' };
    await vi.advanceTimersByTimeAsync(5000);
    expect(c.version).toBe('v2');
    expect(c.isEnabled('checkout', 'u1', { country: 'FR' })).toBe(true);
    expect(seen[1]).toEqual({ type: 'ruleset', version: 'v2', changed: ['banner', 'checkout', 'old'] });
  });

  it('keeps the last good ruleset when a new one cannot be used, and says why', async () => {
    let body: unknown = V1;
    let etag = '"v1"';
    service.on('GET', '/sdk/ruleset', () => json(200, body, { etag }));
    const c = client({ updates: 'poll', pollSeconds: 5 });
    const seen = events(c);
    await c.ready();
    body = { ...V2, bucketing: { name: 'murmur3_32', version: 2 } };
    etag = '"v2"';
    await vi.advanceTimersByTimeAsync(5000);
    expect(c.version).toBe('v1');
    expect(c.isEnabled('checkout', 'u1', { country: 'US' })).toBe(true);
    expect(seen.at(-1)).toMatchObject({ type: 'error', error: { name: 'RulesetError' } });
  });

  it('retries the first download with backoff until it succeeds, and rejects ready() on a refused key', async () => {
    let failures = 2;
    service.on('GET', '/sdk/ruleset', () => (failures-- > 0 ? json(503, { detail: 'down' }) : json(200, V1, { etag: '"v1"' })));
    const c = client({ updates: 'off' });
    let ready = false;
    void c.ready().then(() => (ready = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(ready).toBe(false);
    await vi.advanceTimersByTimeAsync(3000);
    expect(ready).toBe(true);
    expect(service.sent).toHaveLength(3);

    const refused = new FakeService().on('GET', '/sdk/ruleset', () => json(403, { detail: 'Not enough permissions' }));
    const bad = client({ fetch: refused.fetch });
    await expect(bad.ready()).rejects.toMatchObject({ name: 'UpliftError', status: 403, detail: 'Not enough permissions' });
  });

  it('keeps answering from the last ruleset while the service is down', async () => {
    let up = true;
    service.on('GET', '/sdk/ruleset', () => (up ? json(200, V1, { etag: '"v1"' }) : Promise.reject(new TypeError('fetch failed'))));
    const c = client({ updates: 'poll', pollSeconds: 1 });
    const seen = events(c);
    await c.ready();
    up = false;
    await vi.advanceTimersByTimeAsync(3000);
    expect(seen.filter((e) => e.type === 'error')).toHaveLength(3);
    expect(c.isEnabled('checkout', 'u1', { country: 'US' })).toBe(true);
  });
});

describe('ruleset stream', () => {
  const envelope = (version: string, rs?: unknown) => JSON.stringify({ version, heartbeat_seconds: 15, ...(rs ? { ruleset: rs } : {}) });

  it('follows the stream after the download, resuming from the version held', async () => {
    service.on('GET', '/sdk/ruleset', () => json(200, V1, { etag: '"v1"' }));
    const streams: Array<ReturnType<typeof eventStream>> = [];
    service.on('GET', '/sdk/ruleset/stream', (req) => {
      streams.push(eventStream(req.signal));
      return streams.at(-1)!.response;
    });
    const c = client();
    await c.ready();
    const req = await service.waitFor('GET', '/sdk/ruleset/stream');
    expect(req.headers).toMatchObject({ 'last-event-id': 'v1', accept: 'text/event-stream', 'x-api-key': 'key-1' });
    const seen = events(c);
    streams[0].push(`retry: 1000\nevent: version\nid: v1\ndata: ${envelope('v1')}\n\n: heartbeat\n\n`);
    // A change arrives in two chunks, split inside a line.
    const change = `event: ruleset\nid: v2\ndata: ${envelope('v2', V2)}\n\n`;
    streams[0].push(change.slice(0, 40));
    streams[0].push(change.slice(40));
    await vi.waitFor(() => expect(c.version).toBe('v2'));
    expect(c.isEnabled('banner', 'u1')).toBe(true);
    expect(seen).toEqual([{ type: 'ruleset', version: 'v2', changed: ['banner', 'checkout', 'old'] }]);
    // The stream ends (a deploy): the client reconnects after a backoff, naming v2.
    streams[0].end();
    await vi.advanceTimersByTimeAsync(1000);
    expect((await service.waitFor('GET', '/sdk/ruleset/stream', 1)).headers['last-event-id']).toBe('v2');
  });

  it('downloads when the stream names a version it does not hold', async () => {
    let current = { body: V1, etag: '"v1"' };
    service.on('GET', '/sdk/ruleset', () => json(200, current.body, { etag: current.etag }));
    const stream = eventStream();
    service.on('GET', '/sdk/ruleset/stream', (req) => {
      req.signal?.addEventListener('abort', () => stream.end());
      return stream.response;
    });
    const c = client();
    await c.ready();
    await service.waitFor('GET', '/sdk/ruleset/stream');
    current = { body: V2, etag: '"v2"' };
    stream.push(`event: version\nid: v2\ndata: ${envelope('v2')}\n\n`);
    await vi.waitFor(() => expect(c.version).toBe('v2'));
  });

  it('reconnects when the stream goes silent for three heartbeats', async () => {
    service.on('GET', '/sdk/ruleset', () => json(200, V1, { etag: '"v1"' }));
    service.on('GET', '/sdk/ruleset/stream', (req) => {
      const s = eventStream(req.signal);
      s.push(`event: version\nid: v1\ndata: ${JSON.stringify({ version: 'v1', heartbeat_seconds: 2 })}\n\n`);
      return s.response;
    });
    const c = client();
    await c.ready();
    await service.waitFor('GET', '/sdk/ruleset/stream');
    await vi.advanceTimersByTimeAsync(6000 + 1000);
    await service.waitFor('GET', '/sdk/ruleset/stream', 1);
  });

  it('polls a service that has no stream (404)', async () => {
    service.on('GET', '/sdk/ruleset', () => json(200, V1, { etag: '"v1"' }));
    const c = client({ pollSeconds: 2 });
    await c.ready();
    await service.waitFor('GET', '/sdk/ruleset/stream');
    await vi.advanceTimersByTimeAsync(2000);
    expect((await service.waitFor('GET', '/sdk/ruleset', 1)).headers['if-none-match']).toBe('"v1"');
  });

  it('stops following on close()', async () => {
    service.on('GET', '/sdk/ruleset', () => json(200, V1, { etag: '"v1"' }));
    service.on('GET', '/sdk/ruleset/stream', (req) => eventStream(req.signal).response);
    const c = client();
    await c.ready();
    await service.waitFor('GET', '/sdk/ruleset/stream');
    await c.close();
    await vi.advanceTimersByTimeAsync(120_000);
    expect(service.sent).toHaveLength(2);
    expect(c.isEnabled('checkout', 'u', { country: 'US' })).toBe(true);
  });
});

describe('tracking', () => {
  const batches = () => service.sent.filter((r) => r.path === '/tracking/batch').map((r) => (r.body as { events: unknown[] }).events);
  const accepted = () => json(200, { received: 1, stored: 1, failed: 0, results: [], errors: [] });

  it('sends a batch when it is full, or shortly after the first event, never blocking the caller', async () => {
    service.on('POST', '/tracking/batch', accepted);
    const c = client({ bootstrap: V1, updates: 'off' });
    c.track('purchase', 'u1', { experimentKey: 'exp', value: 9.5, properties: { sku: 'a' } });
    expect(batches()).toEqual([]);
    await vi.advanceTimersByTimeAsync(2000);
    expect(batches()).toEqual([[{ event_type: 'purchase', user_id: 'u1', experiment_key: 'exp', value: 9.5, metadata: { sku: 'a' } }]]);
    for (let i = 0; i < 100; i++) c.track('view', `u${i}`);
    await vi.advanceTimersByTimeAsync(0);
    expect(batches()[1]).toHaveLength(100);
  });

  it('retries 429 and 5xx with backoff, honouring Retry-After, and keeps the order', async () => {
    const answers = [json(429, { detail: 'slow down' }, { 'retry-after': '7' }), json(502, {}), accepted(), accepted()];
    service.on('POST', '/tracking/batch', () => answers.shift()!);
    const c = client({ bootstrap: V1, updates: 'off' });
    c.track('a', 'u1');
    await vi.advanceTimersByTimeAsync(2000);
    expect(batches()).toHaveLength(1);
    c.track('b', 'u1');
    await vi.advanceTimersByTimeAsync(6900);
    expect(batches()).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(200);
    expect(batches()).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(2000);
    expect(batches()[2]).toEqual([{ event_type: 'a', user_id: 'u1' }, { event_type: 'b', user_id: 'u1' }]);
    expect(batches()).toHaveLength(3);
  });

  it('does not retry what cannot succeed, and reports it', async () => {
    service.on('POST', '/tracking/batch', () => json(200, { received: 2, stored: 1, failed: 1, results: [], errors: [{ index: 1, error: 'No experiment has that experiment_key.' }] }));
    const c = client({ bootstrap: V1, updates: 'off' });
    const seen = events(c);
    c.track('ok', 'u1');
    c.track('bad', 'u1', { experimentKey: 'nope' });
    await c.flush();
    expect(seen).toEqual([{ type: 'error', error: new Error('event bad refused: No experiment has that experiment_key.') }]);
    service.on('POST', '/tracking/batch', () => json(422, { detail: [] }));
    c.track('x', 'u1');
    await c.flush();
    expect(batches()).toHaveLength(2);
    expect(seen[1]).toMatchObject({ type: 'error' });
  });

  it('reports and drops an event the service would refuse, alone, and sends the others', async () => {
    service.on('POST', '/tracking/batch', accepted);
    const c = client({ bootstrap: V1, updates: 'off' });
    const seen = events(c);
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    c.track('ok', 'u1');
    c.track('', 'u2');
    c.track('x', 'u'.repeat(256));
    c.track('x', 'u3', { experimentKey: '' });
    c.track('x', 'u4', { value: Number.NaN });
    c.track('x', 'u5', { properties: { n: 10n } as unknown as Record<string, unknown> });
    c.track('x', 'u6', { properties: circular });
    c.track('x\u0000', 'u7');
    c.track('x', 'u8', { properties: { note: 'a\ud800b' } });
    c.track('ok', 'u9', { properties: { note: 'typed \\u0000 and 😀' } });
    await c.flush();
    expect(batches()).toEqual([[{ event_type: 'ok', user_id: 'u1' }, { event_type: 'ok', user_id: 'u9', metadata: { note: 'typed \\u0000 and 😀' } }]]);
    expect(seen.map((e) => (e as { error: Error }).error.message)).toEqual([
      'event not recorded: the event type must be 1 to 255 characters',
      'event not recorded: the user id must be 1 to 255 characters',
      'event not recorded: the experiment key must be 1 to 255 characters',
      'event not recorded: the value must be a finite number',
      expect.stringMatching(/^event not recorded: it cannot be sent as JSON \(.*BigInt/),
      expect.stringMatching(/^event not recorded: it cannot be sent as JSON \(.*circular/i),
      'event not recorded: its text holds a NUL character or an unpaired surrogate',
      'event not recorded: its text holds a NUL character or an unpaired surrogate',
    ]);
  });

  it('close() sends what is queued, and gives up after a few tries when the service stays down', async () => {
    service.on('POST', '/tracking/batch', accepted);
    const c = client({ bootstrap: V1, updates: 'off' });
    c.track('a', 'u1');
    await c.close();
    expect(batches()).toEqual([[{ event_type: 'a', user_id: 'u1' }]]);

    const down = new FakeService().on('POST', '/tracking/batch', () => json(503, { detail: 'Service Unavailable' }));
    const d = client({ bootstrap: V1, updates: 'off', fetch: down.fetch });
    const seen = events(d);
    d.track('a', 'u1');
    const closed = d.close();
    await vi.advanceTimersByTimeAsync(30_000);
    await closed;
    expect(down.sent).toHaveLength(3);
    expect(seen).toEqual([{ type: 'error', error: new Error('1 event(s) not recorded: Uplift answered 503: Service Unavailable') }]);
  });
});

describe('assignment', () => {
  const assignment = (assigned: boolean) => ({
    experiment_key: 'exp', user_id: 'u1', variant_id: '00000000-0000-4000-8000-000000000001', variant_name: assigned ? 'B' : 'control',
    is_control: !assigned, configuration: null, assigned, reason: assigned ? 'assigned' : 'targeting',
  });

  it('asks the API once per assigned user and experiment (sticky), sending the context', async () => {
    service.on('POST', '/tracking/assign', () => json(200, assignment(true)));
    const c = client({ bootstrap: V1, updates: 'off' });
    const [a, b] = await Promise.all([c.assign('exp', 'u1', { country: 'US' }), c.assign('exp', 'u1')]);
    expect(a).toEqual(assignment(true));
    expect(b).toBe(a);
    await c.assign('exp', 'u1');
    expect(service.sent).toEqual([expect.objectContaining({ body: { experiment_key: 'exp', user_id: 'u1', context: { country: 'US' } } })]);
  });

  it('does not keep an ineligible answer or a failure', async () => {
    const answers = [json(200, assignment(false)), json(404, { detail: 'Experiment not found' }), json(200, assignment(true))];
    service.on('POST', '/tracking/assign', () => answers.shift()!);
    const c = client({ bootstrap: V1, updates: 'off' });
    expect((await c.assign('exp', 'u1')).assigned).toBe(false);
    await expect(c.assign('exp', 'u1')).rejects.toEqual(new UpliftError(404, 'Experiment not found'));
    expect((await c.assign('exp', 'u1')).assigned).toBe(true);
  });
});

describe('tracking queue limit', () => {
  it('refuses events beyond 10,000 waiting, keeping the queued ones', async () => {
    let up = false;
    service.on('POST', '/tracking/batch', () => (up ? json(200, { errors: [] }) : json(503, { detail: 'down' })));
    const c = client({ bootstrap: V1, updates: 'off' });
    const seen = events(c);
    for (let i = 0; i < 10_001; i++) c.track('e', `u${i}`);
    expect(seen).toEqual([{ type: 'error', error: new Error('tracking queue full (10000 events): the event was dropped') }]);
    up = true;
    await vi.advanceTimersByTimeAsync(2000);
    await c.flush();
    const sent = service.sent.filter((r) => r.path === '/tracking/batch').slice(1).flatMap((r) => (r.body as { events: Array<{ user_id: string }> }).events);
    expect(sent).toHaveLength(10_000);
    expect(sent[0].user_id).toBe('u0');
    expect(sent.at(-1)!.user_id).toBe('u9999');
  });
});
