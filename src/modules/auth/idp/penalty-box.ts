import { WaitPeriodNotYetEndedJwkError } from 'aws-jwt-verify/error';
import type { PenaltyBox } from 'aws-jwt-verify/jwk';

/** After a re-read of the JWKS did not hold a kid, that kid causes no new re-read for this long. */
export const UNKNOWN_KID_WAIT_MS = 10_000;
/** After a re-read of the JWKS did not hold a kid, no kid at all causes a re-read for this long (per JWKS address). */
export const REFETCH_FLOOR_MS = 1_000;
/** Kids remembered per address; far more than one floor period per wait can produce, so only a bound on memory. */
const MAX_REMEMBERED_KIDS = 1_000;

interface AddressState {
  /** No re-read of this address before this time (ms), whatever the kid. */
  floorUntil: number;
  /** Unknown kid -> no re-read for it before this time (ms). Insertion order is oldest first. */
  kids: Map<string, number>;
}

/**
 * When aws-jwt-verify may re-read a JWKS for a kid its cache does not hold. The library's own SimplePenaltyBox is
 * keyed by address alone: one token under a made-up kid (it needs no valid signature) blocked every re-read for 10 s,
 * so a token under a genuinely new, rotated kid was refused meanwhile. Here a kid the provider turned out not to
 * publish waits only for itself (10 s), while a short floor per address (1 s after any such miss) keeps a stream of
 * different made-up kids from costing a JWKS request each. Time comes from the injected clock, not timers.
 *
 * Concurrent lookups of one address share a single request inside the library's cache, so a burst of new kids
 * between two misses still costs one request.
 */
export class KidPenaltyBox implements PenaltyBox {
  private readonly addresses = new Map<string, AddressState>();

  constructor(
    private readonly now: () => number,
    private readonly kidWaitMs = UNKNOWN_KID_WAIT_MS,
    private readonly floorMs = REFETCH_FLOOR_MS,
  ) {}

  async wait(jwksUri: string, kid: string): Promise<void> {
    const state = this.addresses.get(jwksUri);
    if (!state) return;
    const now = this.now();
    // Like the library's box this refuses at once rather than holding the request: the caller answers 401.
    if (state.floorUntil > now || (state.kids.get(kid) ?? 0) > now) {
      throw new WaitPeriodNotYetEndedJwkError('Not allowed to fetch JWKS yet, still waiting for back off period to end');
    }
  }

  registerFailedAttempt(jwksUri: string, kid: string): void {
    const now = this.now();
    let state = this.addresses.get(jwksUri);
    if (!state) {
      state = { floorUntil: 0, kids: new Map() };
      this.addresses.set(jwksUri, state);
    }
    state.floorUntil = now + this.floorMs;
    for (const [known, until] of state.kids) if (until <= now) state.kids.delete(known);
    state.kids.delete(kid);
    state.kids.set(kid, now + this.kidWaitMs);
    if (state.kids.size > MAX_REMEMBERED_KIDS) state.kids.delete(state.kids.keys().next().value!);
  }

  registerSuccessfulAttempt(jwksUri: string, kid: string): void {
    this.addresses.get(jwksUri)?.kids.delete(kid);
  }
}
