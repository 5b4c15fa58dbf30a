/** When a bearer token expires: the `exp` claim of the JWT (seconds), as epoch milliseconds; null when unreadable. */
export function tokenExpiry(token: string | null): number | null {
  if (!token) return null;
  const payload = token.split('.')[1];
  if (!payload) return null;
  try {
    const text = atob(payload.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(payload.length / 4) * 4, '='));
    const exp = (JSON.parse(text) as { exp?: unknown }).exp;
    return typeof exp === 'number' && Number.isFinite(exp) ? exp * 1000 : null;
  } catch {
    return null;
  }
}

/** How long before expiry the dashboard warns. */
export const WARN_BEFORE_MS = 5 * 60_000;

export function minutesLeft(expiresAt: number, now: number): string {
  const minutes = Math.max(1, Math.ceil((expiresAt - now) / 60_000));
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}
