import type { FastifyInstance } from 'fastify';
import { Unprocessable, type Loc } from './errors.js';

export const NUL_REFUSED = 'Value error, NUL characters are not allowed';

/**
 * No stored text may hold a NUL character (PostgreSQL text and jsonb refuse it), so one anywhere in the path
 * parameters, query or a JSON body, in a value or a key, is 422 at its place before any route sees it. A key is
 * located by its parent, so the offending text is never repeated.
 */
export function installInputGuard(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const found =
      nulAt(request.params, ['path']) ?? nulAt(request.query, ['query']) ?? nulAt(request.body, ['body']);
    if (found) throw new Unprocessable({ type: 'value_error', loc: found, msg: NUL_REFUSED });
  });
}

/** The location of the first string (value or key) holding a NUL character, walking without recursion. */
export function nulAt(value: unknown, root: Loc): Loc | undefined {
  const stack: Array<[unknown, Loc]> = [[value, root]];
  while (stack.length) {
    const [current, loc] = stack.pop()!;
    if (typeof current === 'string') {
      if (current.includes('\u0000')) return loc;
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push([current[i], [...loc, i]]);
    } else if (current !== null && typeof current === 'object') {
      for (const key of Object.keys(current)) {
        if (key.includes('\u0000')) return loc;
        stack.push([(current as Record<string, unknown>)[key], [...loc, key]]);
      }
    }
  }
  return undefined;
}
