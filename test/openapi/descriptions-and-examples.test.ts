import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validatorCompiler } from '../../src/platform/validator.js';
import { operations, type OpenApiDoc, type Operation } from '../helpers/openapi.js';
import { testApp, type TestApp } from '../helpers/test-app.js';

/**
 * Issue 20, deliverable 6: the served reference is readable. Every operation of the full profile says more than its
 * summary (a description), and every JSON request body carries at least one example that the app's own body
 * validator accepts, so a route added later without them fails here.
 */
let t: TestApp;
let doc: OpenApiDoc;
beforeAll(async () => {
  t = await testApp({ env: { DEPLOYMENT_PROFILE: 'full' } });
  doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
});
afterAll(() => t.close());

interface Media { schema?: Record<string, unknown>; example?: unknown; examples?: Record<string, { value?: unknown }> }

/** Examples as @fastify/swagger serves them: one on the media type, several as named examples, or left on the schema. */
function examplesOf(media: Media): unknown[] {
  const out: unknown[] = [];
  if (media.example !== undefined) out.push(media.example);
  for (const named of Object.values(media.examples ?? {})) if (named.value !== undefined) out.push(named.value);
  const schema = media.schema ?? {};
  if (Array.isArray(schema.examples)) out.push(...schema.examples);
  if (schema.example !== undefined) out.push(schema.example);
  return out;
}

function jsonBodies(): Array<[string, Media]> {
  const out: Array<[string, Media]> = [];
  for (const [name, op] of operations(doc)) {
    const content = (op.requestBody as { content?: Record<string, Media> } | undefined)?.content ?? {};
    for (const [type, media] of Object.entries(content)) if (type.includes('json')) out.push([`${name} (${type})`, media]);
  }
  return out;
}

describe('the full-profile OpenAPI document', () => {
  it('gives every operation a description beyond its summary', () => {
    const all = [...operations(doc)];
    expect(all.length).toBeGreaterThan(100);
    const missing = all
      .filter(([, op]: [string, Operation]) => typeof op.description !== 'string' || op.description.trim().length < 20 || op.description === op.summary)
      .map(([name]) => name);
    expect(missing).toEqual([]);
  });

  it('gives every JSON request body an example that validates against its own schema', () => {
    const bodies = jsonBodies();
    expect(bodies.length).toBeGreaterThan(50);
    const problems: string[] = [];
    for (const [name, media] of bodies) {
      const examples = examplesOf(media);
      if (examples.length === 0) {
        problems.push(`${name}: no example`);
        continue;
      }
      const { examples: _drop, example: _one, ...schema } = media.schema ?? {};
      const validate = validatorCompiler({ schema, httpPart: 'body', method: 'POST', url: name }) as unknown as {
        (value: unknown): boolean;
        errors?: Array<{ instancePath: string; message?: string }>;
      };
      examples.forEach((example, i) => {
        // The body validator fills defaults in place; validate a copy so the document stays as served.
        if (!validate(structuredClone(example))) {
          problems.push(`${name} example ${i}: ${(validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`).join('; ')}`);
        }
      });
    }
    expect(problems).toEqual([]);
  });

  it('rejects an example that does not fit its schema (the check above is not vacuous)', () => {
    const validate = validatorCompiler({
      schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false },
      httpPart: 'body', method: 'POST', url: '/x',
    }) as unknown as (value: unknown) => boolean;
    expect(validate({ name: 'ok' })).toBe(true);
    expect(validate({ name: 1 })).toBe(false);
    expect(validate({ name: 'ok', extra: true })).toBe(false);
  });
});
