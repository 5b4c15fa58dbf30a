import { JwtVerifier } from 'aws-jwt-verify';
import { validateCognitoJwtFields } from 'aws-jwt-verify/cognito-verifier';
import { FetchError, JwksValidationError } from 'aws-jwt-verify/error';
import type { Fetcher } from 'aws-jwt-verify/https';
import { SimpleJwksCache } from 'aws-jwt-verify/jwk';
import { decomposeUnverifiedJwt } from 'aws-jwt-verify/jwt';
import type { JwtPayload } from 'aws-jwt-verify/jwt-model';
import { KidPenaltyBox } from './penalty-box.js';

export interface VerifierSettings {
  userPoolId: string;
  clientId: string;
  region: string;
  /** IDP_ISSUER; unset accepts both forms of the pool's public issuer. */
  issuer: string | undefined;
  /** IDP_JWKS_URL; unset reads `<issuer>/.well-known/jwks.json`. */
  jwksUrl: string | undefined;
  /** Milliseconds since the epoch (the injected clock): when an unknown kid may cause another JWKS read. */
  now: () => number;
}

export type Verified =
  | { ok: true; payload: JwtPayload }
  | { ok: false; reason: 'wrong_issuer' | 'invalid_token' | 'keys_unreachable'; error?: string };

const JWKS_TIMEOUT_MS = 5_000;

class JwksFetchFailed extends Error {}

const getOnce = (uri: string) => fetch(uri, { signal: AbortSignal.timeout(JWKS_TIMEOUT_MS), redirect: 'error' });

/** aws-jwt-verify checks `exp` only when the token has one; a token without it would never expire. */
class JwtWithoutExpiry extends Error {
  override name = 'JwtWithoutExpiry';
}

/**
 * aws-jwt-verify's own fetcher refuses plain http. The IDP_JWKS_URL seam may be http (a local provider in tests or a
 * private mirror), so http URLs are read with this one; https keeps the library's fetcher.
 */
const plainHttpFetcher: Fetcher = {
  async fetch(uri) {
    let response: Response;
    try {
      response = await getOnce(uri).catch((error: unknown) => {
        // fetch's TypeError is a network failure, most often a kept-alive connection the server closed as it was
        // reused: a GET may be sent again, once, on a new connection. A timeout is not retried.
        if (error instanceof TypeError) return getOnce(uri);
        throw error;
      });
    } catch (error) {
      throw new JwksFetchFailed(`JWKS request failed: ${(error as Error).name}`);
    }
    if (!response.ok) throw new JwksFetchFailed(`JWKS answered ${response.status}`);
    return response.arrayBuffer();
  },
};

/** The issuers a token of this pool may carry: the configured one, or the pool's regional and global forms. */
export function acceptedIssuers(s: Pick<VerifierSettings, 'userPoolId' | 'region' | 'issuer'>): string[] {
  if (s.issuer) return [s.issuer];
  return [
    `https://cognito-idp.${s.region}.amazonaws.com/${s.userPoolId}`,
    `https://issuer-cognito-idp.${s.region}.amazonaws.com/${s.userPoolId}`,
  ];
}

/**
 * Access tokens of one user pool and app client, verified by aws-jwt-verify: signature against the pool's JWKS
 * (fetched once, cached, re-read when a token names an unknown `kid`, so key rotation needs no restart; how often is
 * bounded by KidPenaltyBox), expiry (a token without `exp` is refused), issuer, and the Cognito claims (`token_use` must be `access`, `client_id` the
 * app client's).
 */
export function createAccessTokenVerifier(s: VerifierSettings) {
  const issuers = acceptedIssuers(s);
  const configs = issuers.map((issuer) => ({
    issuer,
    audience: null,
    jwksUri: s.jwksUrl ?? `${issuer}/.well-known/jwks.json`,
    customJwtCheck: ({ payload }: { payload: JwtPayload }) => {
      if (typeof payload.exp !== 'number') throw new JwtWithoutExpiry('The token has no exp claim');
      validateCognitoJwtFields(payload, { tokenUse: 'access', clientId: s.clientId });
    },
  }));
  const needsPlainHttp = configs.some((c) => c.jwksUri.startsWith('http:'));
  const jwksCache = new SimpleJwksCache({
    penaltyBox: new KidPenaltyBox(s.now),
    ...(needsPlainHttp ? { fetcher: plainHttpFetcher } : {}),
  });
  const [first, ...rest] = configs;
  const verifier = JwtVerifier.create([first, ...rest], { jwksCache });

  return async function verify(token: string): Promise<Verified> {
    let issuer: unknown;
    try {
      issuer = decomposeUnverifiedJwt(token).payload.iss;
    } catch (error) {
      return { ok: false, reason: 'invalid_token', error: (error as Error).name };
    }
    if (typeof issuer !== 'string' || !issuers.includes(issuer)) return { ok: false, reason: 'wrong_issuer' };
    try {
      return { ok: true, payload: await verifier.verify(token) };
    } catch (error) {
      if (error instanceof JwksFetchFailed || error instanceof FetchError || error instanceof JwksValidationError) {
        return { ok: false, reason: 'keys_unreachable', error: (error as Error).name };
      }
      return { ok: false, reason: 'invalid_token', error: (error as Error).name };
    }
  };
}

export type AccessTokenVerifier = ReturnType<typeof createAccessTokenVerifier>;
