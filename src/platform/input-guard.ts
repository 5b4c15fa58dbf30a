import type { FastifyInstance } from 'fastify';
import { Unprocessable, type Loc } from './errors.js';

export const NUL_REFUSED = 'Value error, NUL characters are not allowed';
export const UNPAIRED_SURROGATE_REFUSED = 'Value error, text must be valid Unicode (an unpaired surrogate was sent)';

/** A high surrogate not followed by a low one, or a low one not preceded by a high one (JSON can spell either). */
const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a text cannot be stored, or undefined when it can. */
function refusal(text: string): string | undefined {
  if (text.includes('\u0000')) return NUL_REFUSED;
  if (UNPAIRED_SURROGATE.test(text)) return UNPAIRED_SURROGATE_REFUSED;
  return undefined;
}

/**
 * No stored text may hold a NUL character or an unpaired UTF-16 surrogate (PostgreSQL text and jsonb refuse the first;
 * jsonb refuses the second and text would store it as U+FFFD), so one anywhere in the path parameters, query or a
 * JSON body, in a value or a key, is 422 at its place before any route sees it. A key is located by its parent, so
 * the offending text is never repeated.
 */
export function installInputGuard(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const found =
      refusedTextAt(request.params, ['path']) ?? refusedTextAt(request.query, ['query']) ?? refusedTextAt(request.body, ['body']);
    if (found) throw new Unprocessable({ type: 'value_error', loc: found.loc, msg: found.msg });
  });
}

/** The location of the first string (value or key) that cannot be stored, and why, walking without recursion. */
export function refusedTextAt(value: unknown, root: Loc): { loc: Loc; msg: string } | undefined {
  const stack: Array<[unknown, Loc]> = [[value, root]];
  while (stack.length) {
    const [current, loc] = stack.pop()!;
    if (typeof current === 'string') {
      const msg = refusal(current);
      if (msg) return { loc, msg };
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push([current[i], [...loc, i]]);
    } else if (current !== null && typeof current === 'object') {
      for (const key of Object.keys(current)) {
        const msg = refusal(key);
        if (msg) return { loc, msg };
        stack.push([(current as Record<string, unknown>)[key], [...loc, key]]);
      }
    }
  }
  return undefined;
}
