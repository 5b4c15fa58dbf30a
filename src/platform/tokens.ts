import { SignJWT, decodeJwt, jwtVerify } from 'jose';
import type { Clock } from './clock.js';

/** Locally issued access tokens: HS256 JWTs signed with SECRET_KEY, subject = account id. */
export interface TokenService {
  issue(userId: string): Promise<{ token: string; expiresIn: number }>;
  /** The account id, or undefined for a token that is malformed, forged, expired, without `exp` or not an access token. */
  verify(token: string): Promise<string | undefined>;
}

export function createTokenService(opts: { secretKey: string; expireMinutes: number; clock: Clock }): TokenService {
  const key = new TextEncoder().encode(opts.secretKey);
  const expiresIn = opts.expireMinutes * 60;
  return {
    async issue(userId) {
      const now = Math.floor(opts.clock.now().getTime() / 1000);
      const token = await new SignJWT({ type: 'access' })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(userId)
        .setIssuedAt(now)
        .setExpirationTime(now + expiresIn)
        .sign(key);
      return { token, expiresIn };
    },
    async verify(token) {
      try {
        // jose checks `exp` only when present: a token without one would never expire, so it is required.
        const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'], currentDate: opts.clock.now(), requiredClaims: ['exp'] });
        return payload.type === 'access' && typeof payload.sub === 'string' ? payload.sub : undefined;
      } catch {
        return undefined;
      }
    },
  };
}

/**
 * When the bearer token of an already authenticated request expires (its `exp`), for connections that outlive one
 * request (the audit stream). Undefined without a bearer JWT or an `exp`. Read only after the guard verified it.
 */
export function bearerExpiry(authorization: string | undefined): Date | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
  if (!match) return undefined;
  try {
    const { exp } = decodeJwt(match[1]);
    return typeof exp === 'number' ? new Date(exp * 1000) : undefined;
  } catch {
    return undefined;
  }
}
