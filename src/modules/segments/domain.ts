/** The segments module's domain rules other modules use: the targeting context's limits (spec "Limits: targeting context"). */
import { checkParsedContext, checkRawContextSize, checkTargetingContext } from '../../targeting/index.js';
import { Unprocessable, type Loc } from '../../platform/errors.js';

function contextError(loc: Loc, msg: string): Unprocessable {
  return new Unprocessable({ type: 'value_error', loc, msg });
}

/**
 * Spec "Limits: targeting context": over a limit is 422 with the limit's sentence as the message, at the context's
 * location (body.context, query.context, body.user_context). Depth is checked first.
 */
export function assertTargetingContext(context: unknown, loc: Loc): void {
  const problem = checkTargetingContext(context);
  if (problem) throw contextError(loc, problem);
}

export const QUERY_CONTEXT: Loc = ['query', 'context'];

/**
 * The `context` query parameter, held to every limit: to the size limit as sent, before parsing; then it must be a
 * JSON object, within the depth and (compacted) size limits like a body context.
 */
export function parseContextParam(raw: string | undefined): Record<string, unknown> {
  if (raw === undefined) return {};
  const tooLarge = checkRawContextSize(raw);
  if (tooLarge) throw contextError(QUERY_CONTEXT, tooLarge);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Unprocessable({ type: 'json_invalid', loc: QUERY_CONTEXT, msg: 'Invalid JSON' });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Unprocessable({ type: 'dict_type', loc: QUERY_CONTEXT, msg: 'Input should be a valid dictionary' });
  }
  const problem = checkParsedContext(raw, parsed);
  if (problem) throw contextError(QUERY_CONTEXT, problem);
  return parsed as Record<string, unknown>;
}
