import { describe, expect, it } from 'vitest';
import { ApiError, fieldKey, toApiError, unwrapComputed } from './client';

describe('the fetch layer', () => {
  it("turns a 422's loc into field keys a form looks up", () => {
    const error = toApiError(422, {
      detail: [
        { type: 'missing', loc: ['body', 'name'], msg: 'Field required' },
        { type: 'less_than_equal', loc: ['body', 'variants', 1, 'traffic_allocation'], msg: 'Input should be less than or equal to 100' },
        { type: 'greater_than_equal', loc: ['query', 'sample_size'], msg: 'Input should be greater than or equal to 10' },
        { type: 'value_error', loc: ['body', 'name'], msg: 'Too long' },
      ],
    });
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(422);
    expect(error.fieldErrors).toEqual({
      name: 'This field is required. Too long',
      'variants.1.traffic_allocation': 'Enter 100 or less.',
      'query.sample_size': 'Enter 10 or more.',
    });
  });

  it('keeps the message of a {detail: string} answer and of a detail object with a message', () => {
    expect(toApiError(400, { detail: 'This flag is archived. Unarchive it before turning it on.' }).message).toBe(
      'This flag is archived. Unarchive it before turning it on.',
    );
    const inUse = toApiError(409, { detail: { code: 'segment_in_use', message: 'Segment is in use', feature_flags: [] } });
    expect(inUse.message).toBe('Segment is in use');
    expect(inUse.detail).toMatchObject({ code: 'segment_in_use' });
  });

  it('says something useful when the body has no detail', () => {
    expect(toApiError(429, null).message).toMatch(/Too many requests/);
    expect(toApiError(502, null).message).toBe('The server answered 502.');
  });

  it('strips only the body head of a loc', () => {
    expect(fieldKey(['body', 'targeting_rules', 'groups', 0])).toBe('targeting_rules.groups.0');
    expect(fieldKey(['path', 'flag_id'])).toBe('path.flag_id');
    expect(fieldKey([])).toBe('');
  });
  it('treats a 202 of the results routes as not ready yet, with the API message, and passes a 200 body through', async () => {
    const computing = { data: { detail: 'Results are being computed; retry shortly.' }, response: new Response(null, { status: 202 }) };
    await expect(unwrapComputed(Promise.resolve(computing))).rejects.toMatchObject({ status: 202, message: 'Results are being computed; retry shortly.' });
    const ready = { data: { experiment_id: 'e1' }, response: new Response(null, { status: 200 }) };
    await expect(unwrapComputed(Promise.resolve(ready))).resolves.toEqual({ experiment_id: 'e1' });
    const missing = { error: { detail: 'Experiment not found' }, response: new Response(null, { status: 404 }) };
    await expect(unwrapComputed(Promise.resolve(missing))).rejects.toMatchObject({ status: 404, message: 'Experiment not found' });
  });
});

describe('validation messages in words', () => {
  it('says what to type instead of the schema text', () => {
    const error = toApiError(422, {
      detail: [
        { type: 'string_pattern_mismatch', loc: ['body', 'key'], msg: "String should match pattern '^[A-Za-z0-9_.:-]+$'", ctx: { pattern: '^[A-Za-z0-9_.:-]+$' } },
        { type: 'value_error', loc: ['body', 'name'], msg: 'Value error, NUL characters are not allowed' },
        { type: 'string_too_long', loc: ['body', 'description'], msg: 'String should have at most 255 characters', ctx: { max_length: 255 } },
        { type: 'missing', loc: ['body', 'variants'], msg: 'Field required' },
        { type: 'value_error', loc: ['body', 'email_address'], msg: 'value is not a valid email address' },
      ],
    });
    expect(error.fieldErrors).toEqual({
      key: 'Use only letters, digits and the characters _ . : - (no spaces).',
      name: 'NUL characters are not allowed.',
      description: 'Use at most 255 characters.',
      variants: 'This field is required.',
      email_address: 'Enter an email address, like name@example.com.',
    });
    for (const msg of Object.values(error.fieldErrors)) expect(msg).not.toMatch(/should match pattern|Value error|\^\[/);
  });
});

describe('an API that cannot be reached', () => {
  it('says so in words instead of "Failed to fetch"', async () => {
    const { unwrap, isUnreachable, UNREACHABLE } = await import('./client');
    const failure = await unwrap(Promise.reject(new TypeError('Failed to fetch'))).catch((e: unknown) => e);
    expect(isUnreachable(failure)).toBe(true);
    expect((failure as Error).message).toBe(UNREACHABLE);
    expect((failure as Error).message).not.toContain('Failed to fetch');
  });
});
