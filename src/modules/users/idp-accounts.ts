import { randomUUID } from 'node:crypto';
import type { Db, Executor } from '../../db/client.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { UserRow } from '../../db/schema/users.js';
import type { Role } from '../../platform/roles.js';
import { SYSTEM_ACTOR, type AuditLog } from '../../platform/audit.js';
import type { Actor } from '../../platform/auth.js';
import type { Bus } from '../../platform/bus.js';
import type { Clock } from '../../platform/clock.js';
import { ACCOUNTS_CHANGED } from './domain.js';
import { toActor } from './service.js';
import * as store from './store.js';

/** Why the identity provider's user gets no account here (spec, Authentication 5); logged, answered as 401. */
export type LinkRefusal =
  | 'local_password'
  | 'linked_elsewhere'
  | 'legacy_unlinked'
  | 'no_email'
  | 'email_unverified'
  | 'email_taken'
  | 'field_too_long'
  | 'commit_failed';

/** What the provider says about a user seen for the first time (its GetUser record). */
export interface ProviderProfile {
  username: string;
  email: string | undefined;
  /** The provider vouches that the user owns the email (`email_verified`, see `claimsTrue`). */
  emailVerified: boolean;
  givenName: string | undefined;
  familyName: string | undefined;
}

export interface ProviderRoles {
  role: Role;
  isSuperuser: boolean;
}

/** The column limits the users API enforces on the same fields. */
const MAX_USERNAME = 100;
const MAX_EMAIL = 255;
const MAX_FULL_NAME = 255;

export const externalIdOf = (subject: string) => `idp:${subject}`;

/**
 * Whether a provider's boolean claim or attribute says yes: the JSON boolean true, or the text "true" as Cognito's
 * GetUser and some providers' tokens send it. Anything else (absent, false, "True", 1) is no.
 */
export const claimsTrue = (value: unknown): boolean => value === true || value === 'true';

function fullNameOf(p: ProviderProfile): string | null {
  const name = [p.givenName?.trim(), p.familyName?.trim()].filter(Boolean).join(' ');
  return name || null;
}

export type IdpAccountsService = ReturnType<typeof createIdpAccountsService>;

/**
 * Accounts of identity-provider users: found by `external_id = idp:<sub>`, else created once from the provider's
 * record, and only when the provider says the email is verified. An account that already holds the username or email is never taken over (it is someone else's, or a local
 * account), and username, email and name are never updated from the provider afterwards.
 */
export function createIdpAccountsService(deps: { db: Db; audit: AuditLog; clock: Clock; bus: Bus }) {
  const { db, audit, clock } = deps;
  const announce = (userId: string) => deps.bus.publish(ACCOUNTS_CHANGED, userId).catch(() => undefined);

  /**
   * Why the username or email cannot go to a new account for `externalId`: held by another account. An account
   * holding them under the same `externalId` is this subject's own, created by a concurrent first request.
   */
  async function conflict(tx: Executor, externalId: string, profile: ProviderProfile): Promise<LinkRefusal | undefined> {
    const holder = await store.findUserByUsername(tx, profile.username);
    if (holder && holder.externalId !== externalId) {
      if (holder.hashedPassword) return 'local_password';
      if (holder.externalId) return 'linked_elsewhere';
      return 'legacy_unlinked';
    }
    if (!profile.email) return 'no_email';
    // An unverified email is only a claim: anyone may sign up at the provider with someone else's address.
    if (!profile.emailVerified) return 'email_unverified';
    const emailHolder = await store.findUserByEmail(tx, profile.email);
    if (emailHolder && emailHolder.externalId !== externalId) return 'email_taken';
    return undefined;
  }

  return {
    /** The provider subject an account is linked to; undefined for an account of its own (a local one). */
    async subjectOf(userId: string): Promise<string | undefined> {
      const externalId = (await store.findUserById(db, userId))?.externalId;
      return externalId?.startsWith('idp:') ? externalId.slice('idp:'.length) : undefined;
    },

    async linked(subject: string): Promise<Actor | undefined> {
      const row = await store.findUserByExternalId(db, externalIdOf(subject));
      return row && toActor(row);
    },

    /**
     * SYNC_ROLES_ON_LOGIN: role and superuser flag follow the groups. Re-read under a row lock, so concurrent
     * requests write one change and one `role_assign` entry; nothing is written when nothing changed.
     */
    async syncRoles(userId: string, wanted: ProviderRoles, groups: readonly string[]): Promise<Actor | undefined> {
      const result = await db.transaction(async (tx) => {
        const row = await store.findUserByIdForUpdate(tx, userId);
        if (!row) return undefined;
        if (row.role === wanted.role && row.isSuperuser === wanted.isSuperuser) return { row, changed: false };
        const updated = await store.updateUser(tx, userId, { role: wanted.role, isSuperuser: wanted.isSuperuser, updatedAt: clock.now() });
        await audit.record(tx, SYSTEM_ACTOR, {
          action: 'role_assign',
          entityType: 'user',
          entityId: userId,
          before: { role: row.role, is_superuser: row.isSuperuser },
          after: { role: updated.role, is_superuser: updated.isSuperuser },
          details: { source: 'identity_provider_groups', groups: [...groups] },
        });
        return { row: updated, changed: true };
      });
      if (result?.changed) void announce(userId);
      return result && toActor(result.row);
    },

    /**
     * A new passwordless account for the subject. Two first requests racing for one subject create one account:
     * the loser's insert hits the external_id unique index and it answers with the winner's account.
     */
    async create(subject: string, profile: ProviderProfile, roles: ProviderRoles): Promise<{ actor: Actor } | { refused: LinkRefusal; error?: unknown }> {
      const externalId = externalIdOf(subject);
      const existing = await store.findUserByExternalId(db, externalId);
      if (existing) return { actor: toActor(existing) };
      const fullName = fullNameOf(profile);
      const before = await conflict(db, externalId, profile);
      if (before) return { refused: before };
      if (
        profile.username.length > MAX_USERNAME ||
        (profile.email?.length ?? 0) > MAX_EMAIL ||
        (fullName?.length ?? 0) > MAX_FULL_NAME
      ) {
        return { refused: 'field_too_long' };
      }
      try {
        const row = await db.transaction(async (tx) => {
          const now = clock.now();
          const inserted: UserRow = await store.insertUser(tx, {
            id: randomUUID(),
            username: profile.username,
            email: profile.email ?? null,
            hashedPassword: null,
            fullName,
            role: roles.role,
            isActive: true,
            isSuperuser: roles.isSuperuser,
            externalId,
            createdAt: now,
            updatedAt: now,
          });
          await audit.record(tx, SYSTEM_ACTOR, {
            action: 'user_create',
            entityType: 'user',
            entityId: inserted.id,
            after: { username: inserted.username, role: inserted.role, is_superuser: inserted.isSuperuser, is_active: true },
            details: { source: 'identity_provider', external_id: externalId },
          });
          return inserted;
        });
        return { actor: toActor(row) };
      } catch (error) {
        if (isUniqueViolation(error)) {
          const winner = await store.findUserByExternalId(db, externalId);
          if (winner) return { actor: toActor(winner) };
          const after = await conflict(db, externalId, profile);
          if (after) return { refused: after };
        }
        return { refused: 'commit_failed', error };
      }
    },
  };
}
