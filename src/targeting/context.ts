/**
 * Context attribute lookup and context size/depth limits.
 * Pure, no Node-only APIs (no Buffer): usable from the browser/Node SDK.
 */

/** Deepest allowed nesting: every object and array is a level, the context itself the first. */
export const MAX_CONTEXT_DEPTH = 10;
/** Largest allowed context, in bytes of compact UTF-8 JSON (`JSON.stringify(ctx)`). */
export const MAX_CONTEXT_BYTES = 8192;

export const CONTEXT_TOO_DEEP_MESSAGE = 'Targeting context nested more than 10 levels deep';
export const CONTEXT_TOO_LARGE_MESSAGE = 'Targeting context larger than 8192 bytes';

const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Own property (never inherited: `constructor`, `__proto__`, ... are absent), `undefined` if absent. */
function own(o: unknown, key: string): unknown {
  return isRecord(o) && hasOwn(o, key) ? o[key] : undefined;
}

/** Walks a dotted path through nested plain objects (arrays are not traversed). */
function nested(ctx: unknown, path: string): unknown {
  let cur: unknown = ctx;
  for (const part of path.split('.')) {
    cur = own(cur, part);
    if (cur === undefined) return undefined;
  }
  return cur;
}

/**
 * Reads an attribute from a targeting context. The first candidate whose value is not
 * `undefined` wins (`null` counts as a value, and is treated as missing by the operators):
 *
 * - attribute containing a dot, e.g. `user.country`:
 *     1. top-level key `"user.country"`;  2. nested path `ctx.user.country`.
 * - plain attribute, e.g. `country`:
 *     1. top-level key `"country"`;  2. top-level key `"user.country"`;  3. nested `ctx.user.country`.
 *
 * Only own properties are read; a non-object context has no attributes.
 */
export function lookupAttribute(ctx: unknown, attribute: string): unknown {
  if (!isRecord(ctx) || typeof attribute !== 'string' || attribute === '') return undefined;
  const exact = own(ctx, attribute);
  if (exact !== undefined) return exact;
  if (attribute.includes('.')) return nested(ctx, attribute);
  const dotted = own(ctx, `user.${attribute}`);
  if (dotted !== undefined) return dotted;
  return own(own(ctx, 'user'), attribute);
}

/**
 * Nesting depth check, iterative and bounded: stops as soon as a value at depth
 * MAX_CONTEXT_DEPTH + 1 is seen. Counts objects and arrays (own enumerable keys, as JSON.stringify).
 */
export function contextTooDeep(ctx: unknown): boolean {
  if (typeof ctx !== 'object' || ctx === null) return false;
  const stack: Array<[object, number]> = [[ctx, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > MAX_CONTEXT_DEPTH) return true;
    const values: unknown[] = Array.isArray(node) ? node : Object.values(node);
    for (const v of values) {
      if (typeof v === 'object' && v !== null) {
        if (depth + 1 > MAX_CONTEXT_DEPTH) return true;
        stack.push([v, depth + 1]);
      }
    }
  }
  return false;
}

/**
 * UTF-8 byte length of a string, identical to `new TextEncoder().encode(s).length` and to
 * `Buffer.byteLength(s)` (a lone surrogate counts as U+FFFD, 3 bytes). Stops counting once
 * `limit` is exceeded when a limit is given (the returned value is then only known to be > limit).
 */
export function utf8ByteLength(s: string, limit = Infinity): number {
  let bytes = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
    if (bytes > limit) return bytes;
  }
  return bytes;
}

/** Bytes of `JSON.stringify(ctx)` as UTF-8; `undefined`/unserialisable (cycles, BigInt) → Infinity. */
function jsonBytes(ctx: unknown, limit: number): number {
  let text: string | undefined;
  try {
    text = JSON.stringify(ctx);
  } catch {
    return Infinity;
  }
  if (text === undefined) return 0;
  if (text.length > limit) return text.length; // every UTF-16 unit is at least one byte
  return utf8ByteLength(text, limit);
}

/**
 * Checks a targeting context against the limits (flag evaluate, tracking assign, segment
 * evaluate). Depth is checked first. Returns the error message, or null when the context is fine.
 * Never throws; a value JSON cannot serialise counts as too large.
 */
export function checkTargetingContext(ctx: unknown): string | null {
  if (contextTooDeep(ctx)) return CONTEXT_TOO_DEEP_MESSAGE;
  if (jsonBytes(ctx, MAX_CONTEXT_BYTES) > MAX_CONTEXT_BYTES) return CONTEXT_TOO_LARGE_MESSAGE;
  return null;
}

/**
 * Checks a context as sent (e.g. the raw `context` GET parameter, before JSON.parse):
 * more than MAX_CONTEXT_BYTES UTF-8 bytes → the size message, else null.
 */
export function checkRawContextSize(text: string): string | null {
  if (typeof text !== 'string') return null;
  if (text.length > MAX_CONTEXT_BYTES) return CONTEXT_TOO_LARGE_MESSAGE;
  return utf8ByteLength(text, MAX_CONTEXT_BYTES) > MAX_CONTEXT_BYTES ? CONTEXT_TOO_LARGE_MESSAGE : null;
}
