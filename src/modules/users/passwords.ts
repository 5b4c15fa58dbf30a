import bcrypt from 'bcrypt';
import { Unprocessable, type Loc } from '../../platform/errors.js';

export const PASSWORD_RULE =
  'Password must be at least 8 characters and at most 72 bytes in UTF-8, with an upper-case letter, a lower-case letter and a digit';

/** bcrypt reads at most 72 bytes; longer passwords are refused rather than silently truncated. */
export const MAX_PASSWORD_BYTES = 72;

export function meetsPasswordRule(password: string): boolean {
  return (
    [...password].length >= 8 &&
    Buffer.byteLength(password, 'utf8') <= MAX_PASSWORD_BYTES &&
    /\p{Lu}/u.test(password) &&
    /\p{Ll}/u.test(password) &&
    /\p{Nd}/u.test(password)
  );
}

export function assertPasswordRule(password: string, loc: Loc): void {
  if (!meetsPasswordRule(password)) {
    throw new Unprocessable({ type: 'value_error', loc, msg: `Value error, ${PASSWORD_RULE}` });
  }
}

export function hashPassword(password: string, rounds: number): Promise<string> {
  return bcrypt.hash(password, rounds);
}

const decoys = new Map<number, Promise<string>>();

/**
 * A real hash at the configured cost (BCRYPT_ROUNDS), compared against when the account does not exist, so an
 * unknown email costs what a known one does and timing does not reveal which emails exist. Made once per cost.
 */
export function decoyHash(rounds: number): Promise<string> {
  let decoy = decoys.get(rounds);
  if (!decoy) {
    decoy = bcrypt.hash('decoy-password-Uplift-1', rounds);
    decoys.set(rounds, decoy);
  }
  return decoy;
}

export async function verifyPassword(password: string, hash: string | null | undefined, rounds: number): Promise<boolean> {
  if (Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES) return false;
  const ok = await bcrypt.compare(password, hash ?? (await decoyHash(rounds)));
  return ok && Boolean(hash);
}
