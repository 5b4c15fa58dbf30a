/**
 * @uplift/openfeature-provider: an OpenFeature server provider over one @uplift/sdk client. Boolean flags are Uplift
 * feature flags, evaluated in process. String, number and object flags are Uplift typed flags (value_type string,
 * number, json), evaluated in process; a key that names no flag is an Uplift experiment, answered by the user's
 * variant (assignment through the API, sticky and cached by the client). The tracking API records events.
 */
import {
  ErrorCode,
  OpenFeatureEventEmitter,
  ProviderEvents,
  StandardResolutionReasons,
  type EvaluationContext,
  type JsonValue,
  type Provider,
  type ResolutionDetails,
  type TrackingEventDetails,
} from '@openfeature/server-sdk';
import { Uplift, UpliftError, type Attributes, type FlagReason, type UpliftOptions, type VariationReason } from '@uplift/sdk';

/** Uplift's flag reasons as OpenFeature resolution reasons. */
const REASONS: Record<Exclude<FlagReason, 'not_found' | 'error'>, string> = {
  targeting_match: StandardResolutionReasons.TARGETING_MATCH,
  targeting_miss: StandardResolutionReasons.DEFAULT,
  rollout: StandardResolutionReasons.SPLIT,
  disabled: StandardResolutionReasons.DISABLED,
};

/** How a typed flag chose its variation, where that decides the OpenFeature reason (else the flag's reason does). */
const VARIATION_REASONS: Partial<Record<VariationReason, string>> = {
  rule: StandardResolutionReasons.TARGETING_MATCH,
  rule_split: StandardResolutionReasons.SPLIT,
  split: StandardResolutionReasons.SPLIT,
};

type Resolution<T> = ResolutionDetails<T>;

const failure = <T>(value: T, errorCode: ErrorCode, errorMessage: string): Resolution<T> => ({
  value,
  reason: StandardResolutionReasons.ERROR,
  errorCode,
  errorMessage,
});

/**
 * A context value as the service would receive it in JSON: OpenFeature contexts may hold `Date`s, which reach the
 * service as ISO strings, so the local evaluation compares the same text. Copies only the parts holding a Date.
 */
function asJson(value: unknown): unknown {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (Array.isArray(value)) {
    const items = value.map(asJson);
    return items.some((v, i) => v !== value[i]) ? items : value;
  }
  if (typeof value === 'object' && value !== null) {
    let copy: Record<string, unknown> | undefined;
    for (const [key, v] of Object.entries(value)) {
      const json = asJson(v);
      if (json !== v) (copy ??= { ...(value as Record<string, unknown>) })[key] = json;
    }
    return copy ?? value;
  }
  return value;
}

/** The targeting key as the user id, and OpenFeature's context minus it: the attributes Uplift's rules read. */
function split(context: EvaluationContext): { userId: string | undefined; attributes: Attributes } {
  const { targetingKey, ...attributes } = context;
  return { userId: typeof targetingKey === 'string' && targetingKey !== '' ? targetingKey : undefined, attributes: asJson(attributes) as Attributes };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export class UpliftProvider implements Provider {
  readonly metadata = { name: 'uplift' } as const;
  readonly runsOn = 'server' as const;
  readonly events = new OpenFeatureEventEmitter();
  readonly client: Uplift;
  private readonly ownsClient: boolean;
  private unsubscribe: (() => void) | undefined;

  /** Takes the client's options (the provider then owns and closes the client) or a client the application owns. */
  constructor(clientOrOptions: Uplift | UpliftOptions) {
    this.ownsClient = !(clientOrOptions instanceof Uplift);
    this.client = clientOrOptions instanceof Uplift ? clientOrOptions : new Uplift(clientOrOptions);
  }

  /** Ready once the client holds a ruleset; a refused API key fails initialisation. */
  async initialize(): Promise<void> {
    this.unsubscribe ??= this.client.subscribe((event) => {
      if (event.type === 'ruleset' && event.changed.length > 0) {
        this.events.emit(ProviderEvents.ConfigurationChanged, { flagsChanged: event.changed, metadata: { version: event.version ?? '' } });
      }
    });
    await this.client.ready();
  }

  async onClose(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    if (this.ownsClient) await this.client.close();
    else await this.client.flush();
  }

  /** A feature flag, evaluated locally: the value is whether it is on for the context's targetingKey. */
  async resolveBooleanEvaluation(flagKey: string, defaultValue: boolean, context: EvaluationContext): Promise<Resolution<boolean>> {
    const { userId, attributes } = split(context);
    if (userId === undefined) return failure(defaultValue, ErrorCode.TARGETING_KEY_MISSING, 'targetingKey is required: Uplift buckets users by it');
    const evaluation = this.client.evaluate(flagKey, userId, attributes);
    if (evaluation.variation_reason !== undefined) return failure(defaultValue, ErrorCode.TYPE_MISMATCH, `the flag ${JSON.stringify(flagKey)} serves values, not on/off`);
    if (evaluation.reason === 'not_found') return failure(defaultValue, ErrorCode.FLAG_NOT_FOUND, `no flag has the key ${JSON.stringify(flagKey)}`);
    if (evaluation.reason === 'error') return failure(defaultValue, ErrorCode.GENERAL, 'the flag names a segment that cannot be evaluated here');
    return {
      value: evaluation.enabled,
      variant: evaluation.enabled ? 'on' : 'off',
      reason: REASONS[evaluation.reason],
      flagMetadata: evaluation.rule === undefined ? { uplift_reason: evaluation.reason } : { uplift_reason: evaluation.reason, rule: evaluation.rule },
    };
  }

  /** A typed flag of value_type string; else an experiment: the variant's `configuration.value` when a string, else its name. */
  async resolveStringEvaluation(flagKey: string, defaultValue: string, context: EvaluationContext): Promise<Resolution<string>> {
    return this.typedFlag(flagKey, defaultValue, context)
      ?? this.variant(flagKey, defaultValue, context, (configured, name) => (typeof configured === 'string' ? configured : name));
  }

  /** A typed flag of value_type number; else an experiment: the variant's `configuration.value`, which must be a number. */
  async resolveNumberEvaluation(flagKey: string, defaultValue: number, context: EvaluationContext): Promise<Resolution<number>> {
    return this.typedFlag(flagKey, defaultValue, context)
      ?? this.variant(flagKey, defaultValue, context, (configured) => (typeof configured === 'number' ? configured : undefined));
  }

  /** A typed flag of value_type json; else an experiment: the variant's `configuration.value` when an object, else the whole configuration. */
  async resolveObjectEvaluation<T extends JsonValue>(flagKey: string, defaultValue: T, context: EvaluationContext): Promise<Resolution<T>> {
    return this.typedFlag(flagKey, defaultValue, context)
      ?? this.variant(flagKey, defaultValue, context, (configured, _name, configuration) =>
        (isObject(configured) ? configured : configuration ?? undefined) as T | undefined,
      );
  }

  /**
   * A typed flag, evaluated locally (undefined: no flag has the key, so it may name an experiment). The value is the
   * variation served, or the default when the flag serves none (off without off_variation: the reason says why).
   */
  private typedFlag<T>(flagKey: string, defaultValue: T, context: EvaluationContext): Resolution<T> | undefined {
    const { userId, attributes } = split(context);
    const details = this.client.getDetails(flagKey, userId ?? '', defaultValue, attributes);
    if (details.reason === 'not_found') return undefined;
    if (userId === undefined) return failure(defaultValue, ErrorCode.TARGETING_KEY_MISSING, 'targetingKey is required: Uplift buckets users by it');
    if (details.reason === 'type_mismatch') return failure(defaultValue, ErrorCode.TYPE_MISMATCH, `the flag ${JSON.stringify(flagKey)} does not serve values of this type`);
    if (details.reason === 'error') return failure(defaultValue, ErrorCode.GENERAL, 'the flag names a segment that cannot be evaluated here');
    const reason = (details.variation_reason && VARIATION_REASONS[details.variation_reason]) ?? REASONS[details.reason];
    const flagMetadata: Record<string, string> = { uplift_reason: details.reason };
    if (details.variation_reason !== undefined) flagMetadata.variation_reason = details.variation_reason;
    return details.variation === undefined ? { value: defaultValue, reason, flagMetadata } : { value: details.value, variant: details.variation, reason, flagMetadata };
  }

  /** OpenFeature tracking: an Uplift event for the targetingKey; `value` is the event's value, the rest its properties. */
  track(trackingEventName: string, context: EvaluationContext, details: TrackingEventDetails = {}): void {
    const { userId } = split(context);
    if (userId === undefined) return;
    const { value, experimentKey, ...properties } = details;
    this.client.track(trackingEventName, userId, {
      value,
      experimentKey: typeof experimentKey === 'string' ? experimentKey : undefined,
      properties: Object.keys(properties).length > 0 ? properties : undefined,
    });
  }

  private async variant<T>(
    experimentKey: string,
    defaultValue: T,
    context: EvaluationContext,
    pick: (configured: unknown, name: string, configuration: Record<string, unknown> | null) => T | undefined,
  ): Promise<Resolution<T>> {
    const { userId, attributes } = split(context);
    if (userId === undefined) return failure(defaultValue, ErrorCode.TARGETING_KEY_MISSING, 'targetingKey is required: Uplift assigns users by it');
    let assignment;
    try {
      assignment = await this.client.assign(experimentKey, userId, attributes);
    } catch (error) {
      if (error instanceof UpliftError && error.status === 404) return failure(defaultValue, ErrorCode.FLAG_NOT_FOUND, `no active experiment has the key ${JSON.stringify(experimentKey)}`);
      if (error instanceof UpliftError && error.status === 422) return failure(defaultValue, ErrorCode.INVALID_CONTEXT, 'the context is over the targeting limits');
      return failure(defaultValue, ErrorCode.GENERAL, (error as Error).message);
    }
    const value = pick(assignment.configuration?.value, assignment.variant_name, assignment.configuration);
    if (value === undefined) return failure(defaultValue, ErrorCode.TYPE_MISMATCH, `the variant ${JSON.stringify(assignment.variant_name)} has no value of this type`);
    return {
      value,
      variant: assignment.variant_name,
      // An assigned user was split into a variant; anyone else gets the control (holdout, exclusion or targeting).
      reason: assignment.assigned ? StandardResolutionReasons.SPLIT : StandardResolutionReasons.DEFAULT,
      flagMetadata: { uplift_reason: assignment.reason, variant_id: assignment.variant_id, is_control: assignment.is_control },
    };
  }
}
