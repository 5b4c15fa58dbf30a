/**
 * The API's validation messages in words a person reads. The API speaks FastAPI's vocabulary ("String should match
 * pattern '^[A-Za-z0-9_.:-]+$'", "Value error, …"); the dashboard says what to type instead. Anything it does not
 * know keeps the API's sentence, so nothing the server said is lost.
 */
export interface Issue {
  type: string;
  msg: string;
  ctx?: Record<string, unknown>;
}

/** Patterns the API uses for keys, and how to say them. */
const PATTERNS: Record<string, string> = {
  '^[A-Za-z0-9_.:-]+$': 'Use only letters, digits and the characters _ . : - (no spaces).',
  '^[A-Za-z0-9][A-Za-z0-9_.:-]*$': 'Start with a letter or digit, then use only letters, digits and _ . : - (no spaces).',
};

const plural = (n: unknown, word: string) => `${String(n)} ${word}${Number(n) === 1 ? '' : 's'}`;

export function humanMessage(issue: Issue): string {
  // The limit from ctx, else the last number in the API's sentence ("… greater than or equal to 10").
  const lastNumber = /(-?\d+(?:\.\d+)?)(?!.*\d)/.exec(issue.msg)?.[1];
  const ctx: Record<string, unknown> = {};
  for (const key of ['ge', 'gt', 'le', 'lt', 'min_length', 'max_length']) ctx[key] = lastNumber;
  Object.assign(ctx, issue.ctx ?? {});
  switch (issue.type) {
    case 'missing':
      return 'This field is required.';
    case 'extra_forbidden':
      return 'This field is not accepted here.';
    case 'null_not_allowed':
      return 'This field cannot be empty.';
    case 'string_pattern_mismatch': {
      const pattern = ctx.pattern ?? /pattern '(.+)'$/.exec(issue.msg)?.[1];
      return PATTERNS[String(pattern)] ?? 'This value is not in the expected format.';
    }
    case 'string_too_short':
      return Number(ctx.min_length) === 1 ? 'This field is required.' : `Use at least ${plural(ctx.min_length, 'character')}.`;
    case 'string_too_long':
      return `Use at most ${plural(ctx.max_length, 'character')}.`;
    case 'too_short':
      return `Add at least ${plural(ctx.min_length, 'item')}.`;
    case 'too_long':
      return `Use at most ${plural(ctx.max_length, 'item')}.`;
    case 'greater_than_equal':
      return `Enter ${String(ctx.ge)} or more.`;
    case 'greater_than':
      return `Enter a number above ${String(ctx.gt)}.`;
    case 'less_than_equal':
      return `Enter ${String(ctx.le)} or less.`;
    case 'less_than':
      return `Enter a number below ${String(ctx.lt)}.`;
    case 'enum':
    case 'literal_error':
      return `Choose ${String(ctx.expected ?? 'one of the allowed values')}.`;
    case 'uuid_parsing':
      return 'Choose an existing item (this is not a valid id).';
    case 'url_parsing':
      return 'Enter a full URL, starting with https://.';
    case 'datetime_from_date_parsing':
      return 'Enter a date and time.';
    case 'int_parsing':
    case 'int_type':
    case 'float_type':
    case 'float_parsing':
    case 'finite_number':
      return 'Enter a number.';
    case 'string_type':
      return 'Enter text.';
    case 'bool_type':
    case 'bool_parsing':
      return 'Choose yes or no.';
  }
  if (/not a valid email/i.test(issue.msg)) return 'Enter an email address, like name@example.com.';
  // "Value error, NUL characters are not allowed" → "NUL characters are not allowed."; the API's own sentences stay.
  const prefixed = /^(Value error|Assertion failed),\s*/i.exec(issue.msg);
  if (!prefixed) return issue.msg;
  const text = issue.msg.slice(prefixed[0].length);
  const sentence = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?]$/.test(sentence) ? sentence : `${sentence}.`;
}
