import { randomUUID } from 'node:crypto';
import type { Db, Executor } from '../../db/client.js';
import type { UserRow } from '../../db/schema/users.js';
import type { Role } from '../../platform/roles.js';
import type { AuditLog } from '../../platform/audit.js';
import type { Actor } from '../../platform/auth.js';
import type { Bus } from '../../platform/bus.js';
import type { Clock } from '../../platform/clock.js';
import { BadRequest, Conflict, Forbidden, InternalError, NOT_ENOUGH_PERMISSIONS, NotFound } from '../../platform/errors.js';
import { assertPasswordRule, hashPassword, verifyPassword } from './passwords.js';
import type { UserCreate, UserPatch, UserView } from './schemas.js';
import * as store from './store.js';
import { isUniqueViolation, LOCK_NOT_AVAILABLE, sqlState, violatedConstraint } from '../../db/errors.js';

export const USER_NOT_FOUND = 'User not found';
export const EMAIL_TAKEN = 'Email already registered';
export const USERNAME_TAKEN = 'Username already registered';
export const INACTIVE_USER = 'Inactive user';
export const ONLY_ADMIN_CHANGES_IDENTITY = "Only an administrator can change an account's email address or username.";
export const OWN_PASSWORD_THROUGH_PUT = 'Use POST /api/v1/users/me/password to change your own password.';
export const CURRENT_PASSWORD_WRONG = 'Current password is missing or incorrect';
export const SUPERUSER_KEEPS_FLAG = 'Superusers cannot remove their own superuser status';
export const SUPERUSER_STAYS_ACTIVE = 'Superusers cannot deactivate themselves';
export const SUPERUSER_CANNOT_DELETE_SELF = 'Superusers cannot delete themselves';
export const ROLES_SYNCED_FROM_IDP =
  "Roles are set from the identity provider's groups on every sign-in while SYNC_ROLES_ON_LOGIN is on; change the user's groups instead.";

/** Spec user rule 5: how long a change waits for changes in progress to the same accounts. */
export const LOCK_WAIT_MS = 5_000;

/** Channel on which account changes are announced, so API-key and session caches drop what they hold. */
import { ACCOUNTS_CHANGED } from './domain.js';
export { ACCOUNTS_CHANGED };

export interface UsersDeps {
  db: Db;
  audit: AuditLog;
  clock: Clock;
  bus: Bus;
  bcryptRounds: number;
  /** True in identity-provider mode with SYNC_ROLES_ON_LOGIN on: roles cannot be edited here (rule 10). */
  rolesSyncedFromIdp: boolean;
}

/** Fields a change may carry; which ones a caller may set is decided in `applyChange`. */
type UserChange = Partial<Omit<UserPatch, 'password'>> & { password?: string | null };

export type UsersService = ReturnType<typeof createUsersService>;

/** What ensureSuperuser did: created it, found an account with the email, or found the username held by another. */
export type SuperuserOutcome = 'created' | 'exists' | 'username_taken';

export function toUserView(row: UserRow): UserView {
  return {
    id: row.id,
    username: row.username,
    email: row.email,
    full_name: row.fullName,
    role: row.role,
    is_active: row.isActive,
    is_superuser: row.isSuperuser,
    last_login: row.lastLogin?.toISOString() ?? null,
    preferences: row.preferences ?? null,
    external_id: row.externalId,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export function toActor(row: UserRow): Actor {
  return {
    kind: 'user',
    id: row.id,
    username: row.username,
    email: row.email,
    fullName: row.fullName,
    role: row.role,
    isSuperuser: row.isSuperuser,
    isActive: row.isActive,
  };
}

/** A race lost on the email or username unique index: the same 409 the checks before the write give. */
function uniqueConflict(error: unknown): Conflict {
  return new Conflict(violatedConstraint(error)?.includes('email') ? EMAIL_TAKEN : USERNAME_TAKEN);
}

export function createUsersService(deps: UsersDeps) {
  const { db, audit, clock } = deps;
  const announce = (userId: string) => deps.bus.publish(ACCOUNTS_CHANGED, userId).catch(() => undefined);

  /**
   * Runs a change to accounts in one transaction holding row locks on the caller and the target, so concurrent
   * changes to the same superusers take turns (rule 5); the caller is re-read under the lock and must still be
   * active (400) and, where the change needs it, still a superuser (403).
   */
  async function underLocks<T>(
    actor: Actor,
    targetId: string,
    fn: (tx: Executor, caller: UserRow, target: UserRow) => Promise<T>,
  ): Promise<T> {
    try {
      return await db.transaction(async (tx) => {
        const rows = await store.lockUsers(tx, [actor.id, targetId], LOCK_WAIT_MS);
        const caller = rows.find((r) => r.id === actor.id);
        if (!caller || !caller.isActive) throw new BadRequest(INACTIVE_USER);
        const target = rows.find((r) => r.id === targetId);
        if (!target) throw new NotFound(USER_NOT_FOUND);
        return fn(tx, caller, target);
      });
    } catch (error) {
      if (sqlState(error) === LOCK_NOT_AVAILABLE) throw new InternalError('Timed out waiting for a change in progress to the same account');
      if (isUniqueViolation(error)) throw uniqueConflict(error);
      throw error;
    }
  }

  async function assertUnique(tx: Executor, targetId: string | undefined, email: string | null | undefined, username: string | undefined) {
    if (email && (await store.emailTaken(tx, email, targetId))) throw new Conflict(EMAIL_TAKEN);
    if (username && (await store.usernameTaken(tx, username, targetId))) throw new Conflict(USERNAME_TAKEN);
  }

  /** Applies a change that passed the caller checks, writing the audit entries in the same transaction. */
  async function applyChange(tx: Executor, caller: UserRow, target: UserRow, change: UserChange): Promise<UserRow> {
    const values: Partial<UserRow> = {};
    if (change.username !== undefined && change.username !== target.username) values.username = change.username;
    if (change.email !== undefined && change.email !== target.email) values.email = change.email;
    if (change.full_name !== undefined) values.fullName = change.full_name;
    if (change.role !== undefined && change.role !== target.role) values.role = change.role;
    if (change.is_active !== undefined && change.is_active !== target.isActive) values.isActive = change.is_active;
    if (change.is_superuser !== undefined && change.is_superuser !== target.isSuperuser) values.isSuperuser = change.is_superuser;
    if (change.password) values.hashedPassword = await hashPassword(change.password, deps.bcryptRounds);
    const emailChanged = values.email !== undefined && values.email?.toLowerCase() !== target.email?.toLowerCase();
    await assertUnique(tx, target.id, emailChanged ? values.email : undefined, values.username);
    const updated = await store.updateUser(tx, target.id, { ...values, updatedAt: clock.now() });
    const who = { id: caller.id, username: caller.username };
    if (values.isSuperuser !== undefined || values.role !== undefined) {
      await audit.record(tx, who, {
        action: 'role_assign',
        entityType: 'user',
        entityId: target.id,
        before: { role: target.role, is_superuser: target.isSuperuser },
        after: { role: updated.role, is_superuser: updated.isSuperuser },
      });
    }
    if (values.isActive !== undefined) {
      await audit.record(tx, who, {
        action: values.isActive ? 'user_activate' : 'user_deactivate',
        entityType: 'user',
        entityId: target.id,
        before: { is_active: target.isActive },
        after: { is_active: updated.isActive },
      });
    }
    return updated;
  }

  /** Rules 2 and 3: what nobody may do to their own account through PUT/PATCH. */
  function refuseSelfChanges(caller: UserRow, target: UserRow, change: UserChange): void {
    if (caller.id !== target.id) return;
    if (change.password) throw new Forbidden(OWN_PASSWORD_THROUGH_PUT);
    if (caller.isSuperuser) {
      if (change.is_superuser === false) throw new BadRequest(SUPERUSER_KEEPS_FLAG);
      if (change.is_active === false) throw new BadRequest(SUPERUSER_STAYS_ACTIVE);
    }
  }

  return {
    async loadActor(id: string): Promise<Actor | undefined> {
      const row = await store.findUserById(db, id);
      return row && row.isActive ? toActor(row) : undefined;
    },

    async get(id: string): Promise<UserView> {
      const row = await store.findUserById(db, id);
      if (!row) throw new NotFound(USER_NOT_FOUND);
      return toUserView(row);
    },

    /**
     * An account as other resources name their owner (experiment owner_name), or undefined once it is gone: the full
     * name, else the username, each only when it holds no `@`, else null. Never an email.
     */
    async owner(id: string): Promise<{ name: string | null } | undefined> {
      const row = await store.findUserById(db, id);
      if (!row) return undefined;
      if (row.fullName?.trim() && !row.fullName.includes('@')) return { name: row.fullName };
      return { name: row.username.includes('@') ? null : row.username };
    },

    async list(actor: Actor, skip: number, limit: number): Promise<UserView[]> {
      const { rows } = await store.listUsers(db, { skip, limit, onlyId: actor.isSuperuser ? undefined : actor.id });
      return rows.map(toUserView);
    },

    async adminList(search: string | undefined, skip: number, limit: number) {
      const { rows, total } = await store.listUsers(db, { skip, limit, search: search?.trim() || undefined, newestFirst: true });
      return { items: rows.map(toUserView), total, skip, limit };
    },

    async create(actor: Actor | null, body: UserCreate): Promise<UserView> {
      assertPasswordRule(body.password, ['body', 'password']);
      const hashed = await hashPassword(body.password, deps.bcryptRounds);
      try {
        return await db.transaction(async (tx) => {
          await assertUnique(tx, undefined, body.email, body.username);
          const now = clock.now();
          const row = await store.insertUser(tx, {
            id: randomUUID(),
            username: body.username,
            email: body.email,
            hashedPassword: hashed,
            fullName: body.full_name ?? null,
            role: 'VIEWER',
            isActive: body.is_active ?? true,
            isSuperuser: body.is_superuser ?? false,
            createdAt: now,
            updatedAt: now,
          });
          await audit.record(tx, actor && { id: actor.id, username: actor.username }, {
            action: 'user_create',
            entityType: 'user',
            entityId: row.id,
            after: { username: row.username, role: row.role, is_superuser: row.isSuperuser, is_active: row.isActive },
          });
          return toUserView(row);
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw uniqueConflict(error);
        throw error;
      }
    },

    /** PUT /users/{id}: superusers change any account; others only their own name fields (rule 1). */
    async replace(actor: Actor, targetId: string, change: UserChange): Promise<UserView> {
      if (change.password) assertPasswordRule(change.password, ['body', 'password']);
      const updated = await underLocks(actor, targetId, async (tx, caller, target) => {
        if (!caller.isSuperuser) {
          if (caller.id !== target.id) throw new Forbidden(NOT_ENOUGH_PERMISSIONS);
          const sameEmail = (change.email ?? '').toLowerCase() === (target.email ?? '').toLowerCase();
          if (change.username !== target.username || !sameEmail) throw new Forbidden(ONLY_ADMIN_CHANGES_IDENTITY);
          refuseSelfChanges(caller, target, change);
          const { is_active: _a, is_superuser: _s, role: _r, ...allowed } = change;
          return applyChange(tx, caller, target, allowed);
        }
        refuseSelfChanges(caller, target, change);
        return applyChange(tx, caller, target, change);
      });
      void announce(targetId);
      return toUserView(updated);
    },

    /** PATCH and PUT /admin/users/{id}: superuser only, rechecked under the lock (rule 5). */
    async adminUpdate(actor: Actor, targetId: string, change: UserChange): Promise<UserView> {
      if (change.password) assertPasswordRule(change.password, ['body', 'password']);
      const updated = await underLocks(actor, targetId, async (tx, caller, target) => {
        if (!caller.isSuperuser) throw new Forbidden(NOT_ENOUGH_PERMISSIONS);
        if (change.role !== undefined && change.role !== target.role && deps.rolesSyncedFromIdp) {
          throw new Conflict(ROLES_SYNCED_FROM_IDP);
        }
        refuseSelfChanges(caller, target, change);
        return applyChange(tx, caller, target, change);
      });
      void announce(targetId);
      return toUserView(updated);
    },

    /** Rule 7 and 8: API keys go with the account (cascade); owned segments and schedules keep owner null. */
    async delete(actor: Actor, targetId: string, opts: { adminRoute: boolean }): Promise<void> {
      await underLocks(actor, targetId, async (tx, caller, target) => {
        if (opts.adminRoute && !caller.isSuperuser) throw new Forbidden(NOT_ENOUGH_PERMISSIONS);
        if (caller.id === target.id && caller.isSuperuser) throw new BadRequest(SUPERUSER_CANNOT_DELETE_SELF);
        if (caller.id !== target.id && !caller.isSuperuser) throw new Forbidden(NOT_ENOUGH_PERMISSIONS);
        await audit.record(tx, { id: caller.id, username: caller.username }, {
          action: 'user_delete',
          entityType: 'user',
          entityId: target.id,
          before: { username: target.username, role: target.role, is_superuser: target.isSuperuser, is_active: target.isActive },
        });
        await store.deleteUser(tx, target.id);
      });
      void announce(targetId);
    },

    /** POST /users/me/password: the session stays valid, so a missing or wrong current password is 403 (rule 2). */
    async changeOwnPassword(actor: Actor, currentPassword: string | undefined, newPassword: string): Promise<void> {
      const row = await store.findUserById(db, actor.id);
      if (!row) throw new NotFound(USER_NOT_FOUND);
      if (!currentPassword || !(await verifyPassword(currentPassword, row.hashedPassword, deps.bcryptRounds))) {
        throw new Forbidden(CURRENT_PASSWORD_WRONG);
      }
      assertPasswordRule(newPassword, ['body', 'new_password']);
      const hashed = await hashPassword(newPassword, deps.bcryptRounds);
      await store.updateUser(db, actor.id, { hashedPassword: hashed, updatedAt: clock.now() });
    },

    /** The account whose email (any letter case) and password match, or undefined. */
    async verifyCredentials(email: string, password: string): Promise<UserRow | undefined> {
      const row = await store.findUserByEmail(db, email);
      return (await verifyPassword(password, row?.hashedPassword, deps.bcryptRounds)) ? row : undefined;
    },

    recordLogin: (id: string) => store.setLastLogin(db, id, clock.now()),

    /**
     * FIRST_SUPERUSER_* and `uplift create-superuser`: creates a superuser unless an account has that email
     * ('exists', idempotent). When another account holds the username (a different person, or the bootstrap account
     * whose email was changed since), nothing is created and the answer says so ('username_taken'): the caller tells
     * the operator to pick another username rather than claiming the email exists, and a boot does not fail.
     */
    async ensureSuperuser(first: { email: string; password: string; username: string }): Promise<SuperuserOutcome> {
      if (await store.findUserByEmail(db, first.email)) return 'exists';
      if (await store.findUserByUsername(db, first.username)) return 'username_taken';
      const hashed = await hashPassword(first.password, deps.bcryptRounds);
      const now = clock.now();
      try {
        await store.insertUser(db, {
          id: randomUUID(),
          username: first.username,
          email: first.email,
          hashedPassword: hashed,
          role: 'ADMIN',
          isActive: true,
          isSuperuser: true,
          createdAt: now,
          updatedAt: now,
        });
      } catch (error) {
        // Another process booting at the same time created it first, or took the username meanwhile.
        if (isUniqueViolation(error) && (await store.findUserByEmail(db, first.email))) return 'exists';
        if (isUniqueViolation(error) && (await store.findUserByUsername(db, first.username))) return 'username_taken';
        throw error;
      }
      return 'created';
    },

    /** Test and seed helper: sets a role directly, as the identity provider sync would. */
    async setRole(id: string, role: Role | null, isSuperuser?: boolean): Promise<void> {
      await store.updateUser(db, id, { role, ...(isSuperuser === undefined ? {} : { isSuperuser }), updatedAt: clock.now() });
      void announce(id);
    },
  };
}
