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
 * Nesting depth check, bounded: stops as soon as a value at depth MAX_CONTEXT_DEPTH + 1 is seen (so the recursion is
 * at most that deep, cycles included). Counts objects and arrays (own enumerable keys, as JSON.stringify).
 */
export function contextTooDeep(ctx: unknown): boolean {
  return typeof ctx === 'object' && ctx !== null && nestedDeeper(ctx, 1);
}

/** Does `node`, at `depth`, hold an object or array beyond MAX_CONTEXT_DEPTH? */
function nestedDeeper(node: object, depth: number): boolean {
  if (depth > MAX_CONTEXT_DEPTH) return true;
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const v: unknown = node[i];
      if (typeof v === 'object' && v !== null && nestedDeeper(v, depth + 1)) return true;
    }
    return false;
  }
  for (const key in node) {
    if (!hasOwn(node, key)) continue;
    const v: unknown = (node as Record<string, unknown>)[key];
    if (typeof v === 'object' && v !== null && nestedDeeper(v, depth + 1)) return true;
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

/** Is `text` more than `limit` bytes as UTF-8? (Each UTF-16 unit is 1 to 3 bytes: the length often decides alone.) */
function utf8Over(text: string, limit: number): boolean {
  if (text.length > limit) return true;
  if (text.length * 3 <= limit) return false;
  return utf8ByteLength(text, limit) > limit;
}

/** Is `JSON.stringify(ctx)` more than `limit` bytes as UTF-8? Unserialisable (cycles, BigInt): yes. */
function jsonOver(ctx: unknown, limit: number): boolean {
  let text: string | undefined;
  try {
    text = JSON.stringify(ctx);
  } catch {
    return true;
  }
  return text !== undefined && utf8Over(text, limit);
}

/**
 * Checks a targeting context against the limits (flag evaluate, tracking assign, segment
 * evaluate). Depth is checked first. Returns the error message, or null when the context is fine.
 * Never throws; a value JSON cannot serialise counts as too large.
 */
export function checkTargetingContext(ctx: unknown): string | null {
  if (contextTooDeep(ctx)) return CONTEXT_TOO_DEEP_MESSAGE;
  if (jsonOver(ctx, MAX_CONTEXT_BYTES)) return CONTEXT_TOO_LARGE_MESSAGE;
  return null;
}

/**
 * JSON.stringify never writes more than 6 UTF-8 bytes per UTF-16 unit of the JSON text the value was parsed from: a
 * lone surrogate becomes a 6-byte escape, a number in exponent form grows at most 21/4 times (`1e20`), and everything
 * else keeps its size or shrinks (whitespace, escapes, duplicate keys).
 */
const MAX_COMPACT_BYTES_PER_TEXT_UNIT = 6;

/**
 * checkTargetingContext(ctx) for `ctx = JSON.parse(text)`, or for a part of it (the value of one of its properties, or
 * a copy of an object of it without some of its keys, e.g. an OFREP context without `targetingKey`), whose compact JSON
 * is never longer than the whole's: depth first, then the compacted size, which need not be serialised when the text
 * is too short to exceed the limit once compacted.
 */
export function checkParsedContext(text: string, ctx: unknown): string | null {
  if (contextTooDeep(ctx)) return CONTEXT_TOO_DEEP_MESSAGE;
  if (text.length * MAX_COMPACT_BYTES_PER_TEXT_UNIT <= MAX_CONTEXT_BYTES) return null;
  return jsonOver(ctx, MAX_CONTEXT_BYTES) ? CONTEXT_TOO_LARGE_MESSAGE : null;
}

/**
 * Checks a context as sent (e.g. the raw `context` GET parameter, before JSON.parse):
 * more than MAX_CONTEXT_BYTES UTF-8 bytes → the size message, else null.
 */
export function checkRawContextSize(text: string): string | null {
  if (typeof text !== 'string') return null;
  return utf8Over(text, MAX_CONTEXT_BYTES) ? CONTEXT_TOO_LARGE_MESSAGE : null;
}
