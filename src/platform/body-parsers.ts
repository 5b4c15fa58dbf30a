import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { BadRequest, PARSE_ERROR } from './errors.js';

/** Nesting beyond this is refused as unparseable (400) before JSON.parse or validation ever recurse into it. */
export const MAX_JSON_DEPTH = 512;

/**
 * JSON: an empty body reads as "no body" (so a required body is a 422 `missing`, as in FastAPI); prototype
 * poisoning keys, broken JSON and absurd nesting are 400. Forms: url-encoded fields as plain strings.
 */
export function installBodyParsers(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    if (exceedsDepth(text, MAX_JSON_DEPTH)) return done(new BadRequest(PARSE_ERROR), undefined);
    try {
      done(null, secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }));
    } catch {
      done(new BadRequest(PARSE_ERROR), undefined);
    }
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    const fields: Record<string, string> = {};
    for (const [key, value] of new URLSearchParams(body as string)) fields[key] = value;
    done(null, fields);
  });
}

/** One pass over the text, ignoring brackets inside strings. */
export function exceedsDepth(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // backslash escapes the next character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > limit) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}
