import type { QueryDeepPartialEntity, SelectQueryBuilder } from 'typeorm';
import { Admin } from '../admins/entities/admin.entity';
import type { MailService } from '../mail/mail.service';
import { User } from '../users/entities/user.entity';
import type { PrincipalRepository } from './principal.repository';
import type { TokenService } from './token.service';

/** The credential columns users and admins both have (the tables stay theirs). */
export interface Credentialed {
  id: number;
  uuid: string;
  email: string;
  passwordHash: string | null;
  passwordVersion: number;
  passwordChangedAt: Date | null;
  lastLoginAt: Date | null;
}

/**
 * What differs between a user and an admin where passwords and sessions are concerned; the
 * rules themselves are CredentialsService's, once for both.
 */
export interface CredentialSubject<T extends Credentialed> {
  readonly entity: new () => T;
  readonly alias: string;
  /** The `isAdmin` of its refresh and reset tokens. */
  readonly isAdmin: boolean;
  /** What a login answers with and the access token needs: a user's contact and company, an admin's role. */
  withRelations(qb: SelectQueryBuilder<T>): SelectQueryBuilder<T>;
  /** The 403 message for a subject whose password matched but who may not log in. */
  loginRefusal(subject: T): string | undefined;
  /** Whether it may still get access tokens with its refresh token. */
  mayRefresh(subject: T): boolean;
  /** Whether a forgotten password gets a reset e-mail. */
  mayRequestReset(subject: T): boolean;
  /** The caller as the access guard loads it (with its relations), for refresh. */
  findPrincipal(principals: PrincipalRepository, uuid: string): Promise<T | null>;
  /** The access token, its claims from the stored data. */
  signAccess(tokens: TokenService, subject: T): string;
  sendResetMail(mail: MailService, subject: T, token: string): Promise<void>;
  /**
   * Columns a completed reset sets in the same UPDATE as the password. Their SQL reads the row
   * as it was before the update and may use `:changedAt`, the time of the change.
   */
  readonly resetAlsoSets?: QueryDeepPartialEntity<T>;
}

const USER: CredentialSubject<User> = {
  entity: User,
  alias: 'user',
  isAdmin: false,
  withRelations: (qb) =>
    qb.innerJoinAndSelect('user.contact', 'contact').innerJoinAndSelect('user.company', 'company'),
  loginRefusal: (user) => {
    if (user.status === 'pending') return 'Email address is not verified';
    if (user.status === 'suspended') return 'User account is suspended';
    return undefined;
  },
  mayRefresh: (user) => user.status === 'active',
  mayRequestReset: () => true,
  findPrincipal: (principals, uuid) => principals.findUser(uuid),
  signAccess: (tokens, user) =>
    tokens.signUserAccess({
      userUuid: user.uuid,
      contactUuid: user.contact.uuid,
      companyUuid: user.company.uuid,
    }),
  sendResetMail: (mail, user, token) => mail.sendUserPasswordReset(user.email, user.contact.fullName, token),
  // The reset link came by e-mail, so completing it proves the mailbox: a user still `pending`
  // (an invited member who never accepted, an owner who never verified) becomes verified and
  // `active`. A suspended user stays suspended.
  resetAlsoSets: {
    status: () => "CASE WHEN status = 'pending' THEN 'active' ELSE status END",
    emailVerifiedAt: () =>
      "CASE WHEN status = 'pending' THEN COALESCE(email_verified_at, :changedAt) ELSE email_verified_at END",
  },
};

const ADMIN: CredentialSubject<Admin> = {
  entity: Admin,
  alias: 'admin',
  isAdmin: true,
  withRelations: (qb) => qb.innerJoinAndSelect('admin.role', 'role'),
  loginRefusal: (admin) => (admin.isActive ? undefined : 'Admin account is deactivated'),
  mayRefresh: (admin) => admin.isActive,
  mayRequestReset: (admin) => admin.isActive,
  findPrincipal: (principals, uuid) => principals.findAdmin(uuid),
  signAccess: (tokens, admin) =>
    tokens.signAdminAccess({ adminUuid: admin.uuid, roleId: admin.role.id, roleName: admin.role.name }),
  sendResetMail: (mail, admin, token) => mail.sendAdminPasswordReset(admin.email, admin.fullName, token),
};

export interface SubjectTypes {
  user: User;
  admin: Admin;
}

export type SubjectKind = keyof SubjectTypes;

export const CREDENTIAL_SUBJECTS: { readonly [K in SubjectKind]: CredentialSubject<SubjectTypes[K]> } = {
  user: USER,
  admin: ADMIN,
};
