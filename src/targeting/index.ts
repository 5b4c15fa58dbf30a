/**
 * Targeting: rule evaluation, validation, context limits and bucketing.
 * Pure modules without Node-only APIs (bundled into the browser/Node SDK). See README.md.
 */
export {
  OPERATORS,
  SEGMENT_OPERATORS,
  REGEX_OPERATORS,
  LIST_OPERATORS,
  isOperator,
  isSegmentOperator,
  type LogicalOperator,
  type Operator,
  type Condition,
  type ConditionGroup,
  type RuleSet,
  type CompiledSegment,
  type EvaluationEnv,
  type TargetingContext,
} from './types.js';
export {
  MAX_CONTEXT_DEPTH,
  MAX_CONTEXT_BYTES,
  CONTEXT_TOO_DEEP_MESSAGE,
  CONTEXT_TOO_LARGE_MESSAGE,
  lookupAttribute,
  contextTooDeep,
  utf8ByteLength,
  checkTargetingContext,
  checkRawContextSize,
  checkParsedContext,
} from './context.js';
export { applyOperator, isValidOperatorValue, scalarEquals, toNumber, parseDate, type Scalar } from './operators.js';
export { parseSemver, compareSemver, MAX_SEMVER_LENGTH, type SemVer } from './semver.js';
export {
  compileRegex,
  isValidRegex,
  regexTest,
  regexProblem,
  MAX_REGEX_PATTERN_LENGTH,
  MAX_REGEX_PROGRAM_SIZE,
  MAX_REGEX_TEST_COST,
  REGEX_CACHE_SIZE,
} from './regex.js';
export {
  evaluateRuleSet,
  explainRuleSet,
  renderCondition,
  renderValue,
  SegmentError,
  RegexLimitError,
  regexConditionsExceeded,
  MAX_SEGMENT_NESTING,
  type SegmentProblem,
  type Explanation,
} from './evaluate.js';
export {
  validateRuleSet,
  validateSegmentRules,
  isRuleSetShape,
  collectSegmentIds,
  RULE_MESSAGES,
  SEGMENT_RULE_MESSAGES,
  MAX_RULE_NODES,
  MAX_SEGMENTS_PER_RULESET,
  MAX_ATTRIBUTE_LENGTH,
  MAX_REGEX_CONDITIONS,
  MAX_SEGMENT_GROUPS,
  MAX_SEGMENT_CONDITIONS,
  MAX_SEGMENT_REGEX_CONDITIONS,
  MAX_SEGMENT_LIST_VALUES,
} from './validate.js';
export {
  BUCKETING,
  BUCKET_COUNT,
  murmur3_32,
  murmur3_32_string,
  bucketFor,
  bucketerFor,
  BucketUnit,
  type Bucketer,
  percentageToBuckets,
  inRollout,
  pickWeighted,
  flagSalt,
  experimentSalt,
  holdoutSalt,
  mutexSalt,
} from './hash.js';
export { evaluateFlag, hasTargetingRules, type FlagDefinition, type FlagReason, type FlagEvaluation } from './flag.js';
export { compileRuleSet, ruleSetEvaluator, type RuleSetEvaluator } from './compile.js';
export { compileFlag, compileFlags, compileFlagSet, flagDefinitionOf, type CompiledFlagSet, type FlagEvaluator, type FlagSetEvaluator } from './compile-flag.js';
export {
  VALUE_TYPES,
  SPLIT_BUCKETING,
  VARIATION_MESSAGES,
  MAX_VARIATIONS,
  MIN_VARIATIONS,
  MAX_VARIATION_RULES,
  MAX_VARIATION_VALUE_BYTES,
  splitSalt,
  splitBucket,
  pickSplit,
  isTypedFlag,
  validateTypedFields,
  type FlagValueType,
  type FlagVariation,
  type SplitEntry,
  type VariationRule,
  type VariationReason,
  type TypedFields,
  type VariationProblem,
} from './variations.js';
