/**
 * The checks of an experiment body beyond its shape, for create and update (and clone's rules): targeting rules, the
 * segments they name (asked in the writing transaction), variants and metrics, and whether split URL experiments are
 * served in this deployment. Each throws the 422 (or 501) the spec gives.
 */
import type { Executor } from '../../db/client.js';
import { NotImplemented, Unprocessable, type ValidationIssue } from '../../platform/errors.js';
import { collectSegmentIds, RULE_MESSAGES, validateRuleSet } from '../../targeting/index.js';
import { SEGMENT_NOT_USABLE } from '../segments/service.js';
import { metricIssues, variantIssues } from './rules.js';
import type { MetricInput, VariantInput } from './schemas.js';

export const SPLIT_URL_NOT_AVAILABLE = 'Split URL experiments are not available in the core deployment';

/**
 * The segments module's answer to "which of these segment ids may rules name?" (unknown, inactive, archived, invalid).
 * Asked in the transaction that writes the rules: the usable segments stay share-locked until it commits, so a
 * segment archive (which takes the row for update, then looks for experiments naming it) cannot slip in between.
 */
export interface SegmentUsability {
  unusableSegmentIds(ids: string[], tx: Executor): Promise<string[]>;
  /** Whether the rules, with the regex conditions of the segments they name, reach more than the regex limit. */
  regexConditionsExceeded(rules: unknown, tx: Executor): Promise<boolean>;
}

export function createBodyChecks(deps: {
  segments: SegmentUsability;
  splitUrl: unknown;
}) {
/** Flag-style rule validation (pure, before any transaction): 422 at body.targeting_rules. */
function checkTargetingRules(rules: Record<string, unknown> | null | undefined): void {
  const problem = rules ? validateRuleSet(rules) : null;
  if (problem) throw new Unprocessable({ type: 'value_error', loc: ['body', 'targeting_rules'], msg: problem });
}

/**
 * Whether every segment the rules name is usable, asked in `tx`, the transaction that writes the rules (see
 * SegmentUsability): a segment archived concurrently is either seen archived here or sees this experiment.
 */
async function segmentsUsable(tx: Executor, rules: Record<string, unknown> | null | undefined): Promise<boolean> {
  const ids = rules ? collectSegmentIds(rules) : [];
  return ids.length === 0 || (await deps.segments.unusableSegmentIds(ids, tx)).length === 0;
}

/**
 * Create and update: 422 at body.targeting_rules when the rules name a segment that may not be used, or reach more
 * than MAX_REGEX_CONDITIONS regex conditions counting those of the segments they name.
 */
async function checkSegments(tx: Executor, rules: Record<string, unknown> | null | undefined): Promise<void> {
  if (!(await segmentsUsable(tx, rules))) {
    throw new Unprocessable({ type: 'value_error', loc: ['body', 'targeting_rules'], msg: SEGMENT_NOT_USABLE });
  }
  if (rules && (await deps.segments.regexConditionsExceeded(rules, tx))) {
    throw new Unprocessable({ type: 'value_error', loc: ['body', 'targeting_rules'], msg: RULE_MESSAGES.tooManyRegex });
  }
}

function checkBody(body: { variants?: VariantInput[]; metrics?: MetricInput[]; experiment_type?: string }): void {
  if (body.experiment_type === 'split_url' && !deps.splitUrl) throw new NotImplemented(SPLIT_URL_NOT_AVAILABLE);
  const issues: ValidationIssue[] = [
    ...(body.variants ? variantIssues(body.variants, ['body', 'variants']) : []),
    ...(body.metrics ? metricIssues(body.metrics, ['body', 'metrics']) : []),
  ];
  if (issues.length) throw new Unprocessable(issues);
}

  return { checkTargetingRules, segmentsUsable, checkSegments, checkBody };
}
