/**
 * FIRST_SUPERUSER_* at boot: the superuser is created once; a taken username is a warning the operator must act on
 * (no superuser exists for that email), never a failed boot, as other instances may be serving already.
 */
import type { SuperuserOutcome, UsersService } from './service.js';

interface BootLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

export async function bootstrapFirstSuperuser(
  users: Pick<UsersService, 'ensureSuperuser'>,
  first: { email: string; password: string; username: string },
  log: BootLog,
): Promise<SuperuserOutcome> {
  const outcome = await users.ensureSuperuser(first);
  if (outcome === 'username_taken') {
    log.warn(
      { outcome, username: first.username },
      `FIRST_SUPERUSER_EMAIL has no account and the username ${JSON.stringify(first.username)} is taken by another ` +
        'account: no superuser was created. Set FIRST_SUPERUSER_USERNAME to a free username.',
    );
  } else log.info({ outcome }, outcome === 'created' ? 'first superuser created' : 'first superuser checked: an account has that email');
  return outcome;
}
