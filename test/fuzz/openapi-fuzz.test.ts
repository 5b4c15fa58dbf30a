import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIVERS } from '../../src/modules/warehouse/connectors/index.js';
import type { FieldSpec } from '../../src/modules/warehouse/connectors/types.js';
import { WAREHOUSE_TYPES, type WarehouseType } from '../../src/modules/warehouse/types.js';
import { OPENAPI_PATH } from '../../src/platform/openapi.js';
import { testApp, type TestApp } from '../helpers/test-app.js';

/**
 * Black-box fuzzing of every operation in the served OpenAPI document (full profile), driven only by that document,
 * so modules added later are fuzzed without touching this file. Each operation gets FUZZ_RUNS requests (default 6,
 * fixed seed FUZZ_SEED, default 20261124) built from its schemas, with boundary and malformed values mixed in: NUL
 * characters, huge and non-finite numbers, unicode, deep nesting, wrong types, unknown fields, broken JSON.
 *
 * Every answer must be: not a 5xx (unless the operation documents that status, as 501 and 503 are by the spec),
 * within FUZZ_TIMEOUT_MS, a FastAPI-shaped list for a 422, and never an echo of a submitted value in a 422.
 * Longer run: FUZZ_RUNS=200 npx vitest run test/fuzz.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 6);
const SEED = Number(process.env.FUZZ_SEED ?? 20261124);
const TIMEOUT_MS = Number(process.env.FUZZ_TIMEOUT_MS ?? 15_000);
/** Put into generated strings: a 422 that repeats it echoed the input. */
const MARKER = 'zzEchoProbe';

type Schema = Record<string, unknown>;
interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema?: Schema;
}
interface Operation {
  operationId?: string;
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, unknown> }>;
  security?: Array<Record<string, unknown>>;
}
interface Doc {
  paths: Record<string, Record<string, Operation>>;
}

const hugeNumbers = fc.constantFrom(1e308, -1e308, 9_223_372_036_854_775_808, -9_223_372_036_854_775_809, 2 ** 53, -1, 0, 1.5, -0.0001);
const nastyStrings = fc.constantFrom(
  `a\u0000b${MARKER}`,
  `${MARKER}\u0000`,
  'Infinity',
  '-Infinity',
  'NaN',
  '9223372036854775808',
  '1e999',
  '',
  ' ',
  '..',
  '%00',
  '%',
  '../../etc/passwd',
  `${MARKER}𝒳\u202e\uFEFF\u{10FFFF}`,
  `${MARKER}'; DROP TABLE users; --`,
  `{"$where": "1"}${MARKER}`,
  `${MARKER}${'x'.repeat(3000)}`,
  '__proto__',
  'constructor',
  'toString',
);

/** A value of any JSON type, nested at most `depth` levels. */
const anyJson = (depth: number): fc.Arbitrary<unknown> =>
  depth <= 0
    ? fc.oneof(nastyStrings, hugeNumbers, fc.boolean(), fc.constant(null))
    : fc.oneof(
        { arbitrary: nastyStrings, weight: 3 },
        { arbitrary: hugeNumbers, weight: 2 },
        { arbitrary: fc.constant(null), weight: 1 },
        { arbitrary: fc.array(anyJson(depth - 1), { maxLength: 3 }), weight: 1 },
        { arbitrary: fc.dictionary(fc.constantFrom('a', 'unknown_field', '__proto__x', 'constructor_x'), anyJson(depth - 1), { maxKeys: 3 }), weight: 1 },
      );

const deepNesting = fc.integer({ min: 20, max: 700 }).map((levels) => {
  let value: unknown = MARKER;
  for (let i = 0; i < levels; i++) value = i % 2 ? [value] : { nested: value };
  return value;
});

const malformed: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: nastyStrings, weight: 4 },
  { arbitrary: hugeNumbers, weight: 3 },
  { arbitrary: anyJson(2), weight: 2 },
  { arbitrary: deepNesting, weight: 1 },
);

function stringFor(schema: Schema): fc.Arbitrary<string> {
  const min = Number(schema.minLength ?? 0);
  const max = Math.min(Number(schema.maxLength ?? 40), min + 40);
  switch (schema.format) {
    case 'uuid':
      return fc.uuid();
    case 'email':
      return fc.emailAddress();
    case 'date-time':
      return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
    case 'date':
      return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
    case 'uri':
      return fc.webUrl();
    default:
      return fc.string({ minLength: min, maxLength: Math.max(min, max), unit: 'grapheme' });
  }
}

/** Values shaped by a JSON schema, each node replaced by a malformed value now and then. */
function fromSchema(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  const valid = validFromSchema(schema ?? {}, depth);
  return fc.oneof({ arbitrary: valid, weight: 9 }, { arbitrary: malformed, weight: 1 });
}

function validFromSchema(schema: Schema, depth: number): fc.Arbitrary<unknown> {
  if (Array.isArray(schema.enum) && schema.enum.length) return fc.constantFrom(...(schema.enum as unknown[]));
  if ('const' in schema) return fc.constant(schema.const);
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches) && branches.length) return fc.oneof(...branches.map((b) => validFromSchema(b as Schema, depth)));
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length) return validFromSchema(schema.allOf[0] as Schema, depth);
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : schema.type ? [schema.type as string] : [];
  const type = types.find((t) => t !== 'null') ?? (schema.properties ? 'object' : undefined);
  switch (type) {
    case 'string':
      return stringFor(schema);
    case 'integer':
      return fc.integer({ min: Number(schema.minimum ?? -1000), max: Number(schema.maximum ?? 100_000) });
    case 'number':
      return fc.double({ min: Number(schema.minimum ?? -1e6), max: Number(schema.maximum ?? 1e6), noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'array':
      if (depth > 4) return fc.constant([]);
      return fc.array(fromSchema(schema.items as Schema, depth + 1), {
        minLength: Math.min(Number(schema.minItems ?? 0), 3),
        maxLength: Math.min(Number(schema.maxItems ?? 3), 3),
      });
    case 'object': {
      if (depth > 4) return fc.constant({});
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      const required = new Set((schema.required ?? []) as string[]);
      const shape: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, sub] of Object.entries(properties)) shape[name] = fromSchema(sub, depth + 1);
      const known = fc.record(shape, { requiredKeys: [...required].filter((k) => k in shape) });
      const extra = fc.dictionary(fc.constantFrom('unknown_field', 'extra', `${MARKER}key`), anyJson(1), { maxKeys: 2 });
      return fc.tuple(known, fc.option(extra, { freq: 4 })).map(([k, e]) => ({ ...k, ...(e ?? {}) }));
    }
    default:
      return anyJson(2);
  }
}

/** A path, query or header value as text. */
function textFor(schema: Schema | undefined): fc.Arbitrary<string> {
  return fromSchema(schema).map((v) => (typeof v === 'string' ? v : JSON.stringify(v) ?? 'null'));
}

interface Built {
  url: string;
  headers: Record<string, string>;
  payload?: string;
}

function requestFor(path: string, op: Operation): fc.Arbitrary<Built> {
  const params = op.parameters ?? [];
  const pathParams = params.filter((p) => p.in === 'path');
  const queryParams = params.filter((p) => p.in === 'query');
  const pathArb = fc.tuple(...pathParams.map((p) => textFor(p.schema)));
  const queryArb = fc.tuple(
    ...queryParams.map((p) => (p.required ? textFor(p.schema).map((v) => v as string | undefined) : fc.option(textFor(p.schema), { nil: undefined }))),
  );
  const unknownQuery = fc.option(fc.tuple(fc.constantFrom('unknown', 'skip', 'limit', `${MARKER}`), textFor({})), { freq: 5 });
  const content = op.requestBody?.content ?? {};
  const json = content['application/json'];
  const form = content['application/x-www-form-urlencoded'];
  const bodyArb: fc.Arbitrary<{ text?: string; type?: string }> = json
    ? fc.oneof(
        { arbitrary: fromSchema(json.schema).map((v) => ({ text: JSON.stringify(v) ?? 'null', type: 'application/json' })), weight: 8 },
        { arbitrary: fc.constantFrom('{"a":', '[1,2', '{"x":1}}', 'nul', '"\\u0000"', '[[[[[[[[[[').map((text) => ({ text, type: 'application/json' })), weight: 1 },
        { arbitrary: fc.constant({}), weight: 1 },
      )
    : form
      ? fromSchema(form.schema).map((v) => ({
          text: new URLSearchParams(Object.entries((v && typeof v === 'object' ? v : {}) as Record<string, unknown>).map(([k, x]): [string, string] => [k, typeof x === 'string' ? x : (JSON.stringify(x) ?? 'null')])).toString(),
          type: 'application/x-www-form-urlencoded',
        }))
      : fc.constant({});
  return fc.tuple(pathArb, queryArb, unknownQuery, bodyArb).map(([pathValues, queryValues, extra, body]) => {
    let url = path;
    pathParams.forEach((p, i) => {
      url = url.replace(`{${p.name}}`, encodeURIComponent(pathValues[i]) || '%20');
    });
    const search = new URLSearchParams();
    queryParams.forEach((p, i) => {
      const value = queryValues[i];
      if (value !== undefined) search.append(p.name, value);
    });
    if (extra) search.append(extra[0], extra[1]);
    const query = search.toString();
    const headers: Record<string, string> = {};
    if (body.type) headers['content-type'] = body.type;
    return { url: query ? `${url}?${query}` : url, headers, payload: body.text };
  });
}

function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${TIMEOUT_MS} ms: ${what}`)), TIMEOUT_MS);
    }),
  ]);
}

function checkAnswer(op: Operation, method: string, built: Built, res: LightMyRequestResponse): void {
  const what = `${method} ${built.url} -> ${res.statusCode} ${res.body.slice(0, 300)}`;
  const documented = Object.keys(op.responses ?? {});
  if (res.statusCode >= 500) {
    expect(res.statusCode !== 500 && documented.includes(String(res.statusCode)), `undocumented 5xx: ${what}`).toBe(true);
  }
  if (res.statusCode === 422) {
    const body = res.json() as { detail: unknown };
    if (Array.isArray(body.detail)) {
      expect(body.detail.length, what).toBeGreaterThan(0);
      expect(body.detail.length, what).toBeLessThanOrEqual(50);
      for (const item of body.detail as Array<Record<string, unknown>>) {
        expect(typeof item.type, what).toBe('string');
        expect(typeof item.msg, what).toBe('string');
        expect(Array.isArray(item.loc), what).toBe(true);
        expect(['body', 'query', 'path', 'header'], what).toContain((item.loc as unknown[])[0]);
        expect(JSON.stringify(item.msg), `422 message echoes the input: ${what}`).not.toContain(MARKER);
        expect(JSON.stringify(item.ctx ?? null), `422 ctx echoes the input: ${what}`).not.toContain(MARKER);
      }
    } else {
      expect(typeof body.detail, what).toBe('string');
    }
  }
}

let t: TestApp;
let doc: Doc;
let credentials: Record<string, Record<string, string>>;
let duckdbDir: string;

const docOperations = (d: Doc) =>
  Object.entries(d.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
      .map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
  );

/** Streams never end by design: they are not request/response operations to fuzz. */
const isStream = (op: Operation) => Object.values(op.responses ?? {}).some((r) => Object.keys(r.content ?? {}).includes('text/event-stream'));

beforeAll(async () => {
  duckdbDir = mkdtempSync(join(tmpdir(), 'uplift-fuzz-duckdb-'));
  // A credential key, so warehouse connection bodies are checked and stored rather than refused with 503.
  t = await testApp({
    env: { DEPLOYMENT_PROFILE: 'full', WAREHOUSE_CREDENTIALS_KEYS: randomBytes(32).toString('base64'), WAREHOUSE_DUCKDB_DIR: duckdbDir },
  });
  doc = (await t.inject({ method: 'GET', url: OPENAPI_PATH })).json() as Doc;
  const admin = await t.user({ role: 'ADMIN', superuser: true });
  const key = await t.apiKey(admin, ['sdk:ruleset']);
  credentials = { bearer: admin.headers, apiKey: key.headers };
});
afterAll(async () => {
  await t.close();
  rmSync(duckdbDir, { recursive: true, force: true });
});

describe('fuzzing every documented operation', () => {
  it('finds operations in the served document', () => {
    expect(docOperations(doc).length).toBeGreaterThan(100);
  });

  it(`answers every generated request without a 5xx, a hang, a misshapen 422 or an echo (${RUNS} runs per operation)`, async () => {
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    for (const { path, method, op } of docOperations(doc)) {
      if (isStream(op)) continue;
      const scheme = Object.keys(op.security?.[0] ?? {})[0];
      const auth = scheme ? credentials[scheme] ?? {} : {};
      try {
        await fc.assert(
          fc.asyncProperty(requestFor(path, op), async (built) => {
            const res = await withTimeout(
              t.inject({ method: method as 'GET', url: built.url, headers: { ...auth, ...built.headers }, payload: built.payload }),
              `${method} ${built.url}`,
            );
            statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
            checkAnswer(op, method, built, res);
          }),
          { seed: SEED, numRuns: RUNS, endOnFailure: true },
        );
      } catch (error) {
        failures.push(`${method} ${path}: ${(error as Error).message.split('\n').slice(0, 6).join(' | ')}`);
      }
    }
    expect(failures).toEqual([]);
    // The run reached the handlers: the credentials survived it and some requests were valid enough to succeed.
    const ok = [...statuses].filter(([status]) => status < 300).reduce((n, [, count]) => n + count, 0);
    const unauthorized = statuses.get(401) ?? 0;
    expect(ok, JSON.stringify([...statuses])).toBeGreaterThan(0);
    expect(unauthorized, JSON.stringify([...statuses])).toBeLessThan(ok);
    expect((await t.inject({ method: 'GET', url: '/api/v1/auth/me', headers: credentials.bearer })).statusCode).toBe(200);
  }, Math.max(110_000, RUNS * 20_000));
});

/**
 * Warehouse connection bodies carry `settings` and `credentials` as free JSON objects in the document: their fields
 * depend on `warehouse_type` and are the driver's (connectors/). Random objects only ever meet the first check, so for
 * every warehouse type the connection operations of the document (found by their `settings`/`credentials` body or
 * their `connection_id`, so new ones join by themselves) get bodies built from that type's fields, mostly valid and
 * now and then malformed, on a saved connection of that type. Hosts and URLs stay on this machine: a test
 * connection fails fast there instead of waiting on the network.
 */
const LOOPBACK: Record<string, fc.Arbitrary<string>> = {
  host: fc.constantFrom('127.0.0.1', 'localhost'),
  url: fc.constantFrom('http://127.0.0.1:1', 'http://localhost:9/', 'not a url'),
  account: fc.constantFrom('127.0.0.1', 'localhost'),
};

function fieldValue(name: string, spec: FieldSpec): fc.Arbitrary<unknown> {
  const valid =
    spec.kind === 'integer'
      ? fc.integer({ min: spec.min ?? -10, max: spec.max ?? 100_000 })
      : spec.kind === 'boolean'
        ? fc.boolean()
        : (LOOPBACK[name] ?? fc.string({ minLength: spec.required ? 1 : 0, maxLength: Math.min(spec.maxLength ?? 40, 40), unit: 'grapheme' }));
  return fc.oneof({ arbitrary: valid, weight: 9 }, { arbitrary: malformed, weight: 1 });
}

function fieldsFor(specs: Record<string, FieldSpec>): fc.Arbitrary<Record<string, unknown>> {
  const shape = Object.fromEntries(Object.entries(specs).map(([name, spec]) => [name, fieldValue(name, spec)]));
  const required = Object.entries(specs).filter(([, spec]) => spec.required).map(([name]) => name);
  return fc.record(shape, { requiredKeys: required });
}

/** A body of the operation's schema whose type, settings and credentials are those of one warehouse type. */
function warehouseBody(schema: Schema, type: WarehouseType): fc.Arbitrary<unknown> {
  const driver = DRIVERS[type];
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  return fc
    .tuple(fromSchema(schema), fieldsFor(driver.settings), fieldsFor(driver.credentials), fc.boolean())
    .map(([base, settings, creds, replaceCredentials]) => {
      if (!base || typeof base !== 'object' || Array.isArray(base)) return base;
      const body = { ...(base as Record<string, unknown>) };
      if ('warehouse_type' in properties) body.warehouse_type = type;
      if ('settings' in properties) body.settings = settings;
      // An update may leave the stored credentials alone.
      if ('credentials' in properties) body.credentials = replaceCredentials || 'warehouse_type' in properties ? creds : undefined;
      return body;
    });
}

/** Sure-valid fields of one warehouse type, for the connection the path-id operations work on. */
function validFields(specs: Record<string, FieldSpec>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(specs)
      .filter(([, spec]) => spec.required)
      .map(([name, spec]) => [name, spec.kind === 'integer' ? (spec.min ?? 1) : spec.kind === 'boolean' ? false : ({ host: '127.0.0.1', url: 'http://127.0.0.1:1', path: 'fuzz.duckdb' } as Record<string, string>)[name] ?? 'fuzz']),
  );
}

describe('fuzzing the warehouse connection bodies of every warehouse type', () => {
  const CONNECTIONS = '/api/v1/warehouse/analysis/connections';
  const connectionOps = () =>
    docOperations(doc).filter(({ path, method, op }) => {
      if (!path.startsWith(CONNECTIONS) || !['POST', 'PUT'].includes(method)) return false;
      const body = op.requestBody?.content?.['application/json']?.schema?.properties as Record<string, unknown> | undefined;
      return Boolean(body && ('settings' in body || 'credentials' in body)) || path.includes('{connection_id}');
    });

  it('finds create, update and both tests among the operations', () => {
    const ids = connectionOps().map(({ op }) => op.operationId);
    expect(ids).toEqual(expect.arrayContaining(['createWarehouseConnection', 'updateWarehouseConnection', 'testUnsavedWarehouseConnection', 'testWarehouseConnection']));
  });

  it.each([...WAREHOUSE_TYPES])(`answers %s connection bodies without a 5xx, a hang, a misshapen 422 or an echo (${RUNS} runs per operation)`, async (type) => {
    const admin = credentials.bearer;
    const driver = DRIVERS[type];
    const created = await t.inject({
      method: 'POST', url: CONNECTIONS, headers: admin,
      payload: { name: `fuzz ${type}`, warehouse_type: type, settings: validFields(driver.settings), credentials: validFields(driver.credentials) },
    });
    // A type whose driver is not installed here is refused (422 connector_disabled); its bodies are still fuzzed.
    expect([201, 422], created.body).toContain(created.statusCode);
    const connectionId = created.statusCode === 201 ? (created.json() as { id: string }).id : undefined;
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    for (const { path, method, op } of connectionOps()) {
      if (path.includes('{connection_id}') && !connectionId) continue;
      const url = path.replace('{connection_id}', connectionId ?? '');
      const schema = op.requestBody?.content?.['application/json']?.schema;
      const bodies = schema ? warehouseBody(schema, type).map((v) => JSON.stringify(v) ?? 'null') : fc.constant(undefined);
      try {
        await fc.assert(
          fc.asyncProperty(bodies, async (payload) => {
            const built: Built = { url, headers: payload === undefined ? {} : { 'content-type': 'application/json' }, payload };
            const res = await withTimeout(t.inject({ method: method as 'POST', url, headers: { ...admin, ...built.headers }, payload }), `${method} ${url}`);
            statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
            checkAnswer(op, method, built, res);
          }),
          { seed: SEED, numRuns: RUNS, endOnFailure: true },
        );
      } catch (error) {
        failures.push(`${method} ${path}: ${(error as Error).message.split('\n').slice(0, 6).join(' | ')}`);
      }
    }
    expect(failures).toEqual([]);
    // Available drivers: some bodies got past every check (a connection saved, changed or tested).
    if (connectionId) expect([...statuses.keys()].some((status) => status < 300), JSON.stringify([...statuses])).toBe(true);
  }, Math.max(60_000, RUNS * 10_000));
});
