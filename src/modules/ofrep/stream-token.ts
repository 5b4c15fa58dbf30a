import { hkdfSync } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
import type { Clock } from '../../platform/clock.js';

/**
 * The event-stream URL authenticates by itself (a browser's EventSource sends no custom header) with a short-lived
 * HS256 token naming the API key's id, never the key. Its signing key is derived from SECRET_KEY for this use only,
 * so a stream token is never an access token and the reverse. Tokens are issued per window: within one window the
 * same key gets the same token, so the bulk answer (and its ETag) stays the same and the provider keeps its connection;
 * a token is accepted until the end of the window after the one it was issued in.
 */
export const STREAM_TOKEN_WINDOW_MS = 5 * 60_000;
const AUDIENCE = 'uplift:ofrep-stream';

export interface StreamTokens {
  issue(keyId: string): Promise<string>;
  /** The API key id the token names, or undefined when it is forged, expired or not a stream token. */
  verify(token: string): Promise<string | undefined>;
}

export function createStreamTokens(secretKey: string, clock: Clock): StreamTokens {
  const key = new Uint8Array(hkdfSync('sha256', secretKey, 'uplift', 'ofrep event stream token', 32));
  let window = -1;
  let issued = new Map<string, Promise<string>>();
  return {
    issue(keyId) {
      const current = Math.floor(clock.now().getTime() / STREAM_TOKEN_WINDOW_MS);
      if (current !== window) {
        window = current;
        issued = new Map();
      }
      let token = issued.get(keyId);
      if (!token) {
        token = new SignJWT({})
          .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
          .setSubject(keyId)
          .setAudience(AUDIENCE)
          .setExpirationTime(((current + 2) * STREAM_TOKEN_WINDOW_MS) / 1000)
          .sign(key);
        issued.set(keyId, token);
      }
      return token;
    },
    async verify(token) {
      try {
        const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'], audience: AUDIENCE, currentDate: clock.now() });
        return typeof payload.sub === 'string' ? payload.sub : undefined;
      } catch {
        return undefined;
      }
    },
  };
}
