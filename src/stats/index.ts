/**
 * Uplift statistics: pure, total functions (no I/O). See docs/statistics.md.
 * Result objects use snake_case fields because they are serialised to the API as-is.
 */
export {
  normalCdf,
  normalSf,
  normalPdf,
  normalQuantile,
  studentTTwoSidedP,
  studentTQuantile,
  regularizedGammaQ,
  chiSquareSf,
  regularizedBeta,
  betaCdf,
  betaSf,
  betaQuantile,
  betaPdf,
  betaLogPdf,
  logBeta,
} from './distributions.js';
export { fisherExactTwoSided } from './fisher.js';
export {
  welchTTest,
  summaryFromSd,
  summaryFromSums,
  type SampleSummary,
  type WelchResult,
  type WelchDegenerateReason,
} from './welch.js';
export {
  adjust,
  bonferroni,
  holm,
  benjaminiHochberg,
  CORRECTION_METHODS,
  type CorrectionMethod,
} from './corrections.js';
export { srmChiSquare, SRM_P_THRESHOLD, type SrmResult } from './srm.js';
export {
  sampleSizeTwoProportions,
  sampleSizeForEffect,
  achievedPower,
  minimumDetectableEffect,
  runtimeDays,
  treatmentRateFor,
  type Computed,
  type PowerFailureReason,
  type EffectType,
  type SampleSize,
  type MinimumDetectableEffect,
  type RuntimeInput,
} from './power.js';
export {
  msprtTwoProportions,
  msprtFromCounts,
  confidenceSequenceTwoProportions,
  runningMinimum,
  type MsprtInput,
  type MsprtResult,
  type ConfidenceSequenceResult,
  type SequentialDegenerateReason,
} from './sequential.js';
export {
  posterior,
  probabilityGreater,
  probabilityTreatmentBeatsControl,
  expectedLoss,
  ropeProbability,
  credibleInterval,
  bayesianDecision,
  betaBinomialAnalysis,
  DEFAULT_PRIOR,
  type BetaParams,
  type ArmCounts,
  type BayesianDecision,
  type DecisionInput,
  type BetaBinomialResult,
  type BetaBinomialOptions,
  type ArmPosteriorSummary,
} from './bayesian.js';
export { cupedTheta, cupedCompare, type CupedStats, type CupedArm, type CupedResult } from './cuped.js';
export {
  thompsonWeights,
  applyFloor,
  mulberry32,
  sampleBeta,
  sampleGamma,
  type ArmTrials,
  type ThompsonOptions,
} from './thompson.js';
export { compareProportions, type ProportionComparison } from './proportions.js';
export {
  guardrailMsprt,
  guardrailMsprtRatio,
  type GuardrailRatioInput,
  DEFAULT_MIXING_SCALE,
  type GuardrailInput,
  type GuardrailResult,
  type GuardrailSample,
  type GuardrailDirection,
  type GuardrailDegenerateReason,
} from './guardrail.js';
export { finiteOrNull } from './numeric.js';
export { sequentialSrm, srmLogBayesFactor, SRM_PRIOR_CONCENTRATION, type SequentialSrmResult } from './srm-sequential.js';
export {
  ratioArm,
  compareRatios,
  type RatioStats,
  type RatioArm,
  type RatioComparison,
  type RatioDegenerateReason,
} from './ratio.js';
export {
  capGroups,
  quantileLinear,
  quantileOfOrdered,
  type Capping,
  type CappedGroup,
  type CappingResult,
} from './capping.js';
export {
  quantileRanks,
  quantileSummary,
  quantileSummaryOfSorted,
  compareQuantiles,
  type QuantileSummary,
  type QuantileArm,
  type QuantileComparison,
  type QuantileDegenerateReason,
} from './quantile.js';
export { msprtNormal, confidenceSequenceNormal, type NormalDifference } from './sequential.js';
export { normalBayes, normalInterval, type NormalArm, type NormalBayesResult, type NormalBayesReason } from './bayesian-normal.js';
export { sampleSizeTwoMeans, achievedPowerTwoMeans } from './power-means.js';
export { cupedCompareRatios, type RatioCupedStats, type RatioCupedResult } from './cuped-ratio.js';
