import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, ObjectLiteral, Repository } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm';
import {
  BadRequestError,
  ConflictError,
  ForbiddenError,
  InvalidCredentialsError,
} from '../../common/errors/domain-error';
import { MailService } from '../mail/mail.service';
import type { User } from '../users/entities/user.entity';
import {
  CREDENTIAL_SUBJECTS,
  Credentialed,
  CredentialSubject,
  SubjectKind,
  SubjectTypes,
} from './credential-subjects';
import { PasswordService } from './password.service';
import { PrincipalRepository } from './principal.repository';
import { RefreshClaims, TokenService } from './token.service';

const INVALID_LOGIN = 'Invalid email or password';
const INVALID_RESET = 'Invalid or expired reset token';
const INVALID_INVITE = 'Invalid or expired invitation';
const REVOKED = 'Refresh token has been revoked';

/** A successful login: the tokens, and the subject with its relations for the profile part of the answer. */
export interface SignedIn<T> {
  accessToken: string;
  refreshToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
  subject: T;
}

/**
 * Passwords and sessions of users and admins, once for both (CredentialSubject says what
 * differs): login with one hash check whether or not the e-mail exists, forgotten and reset
 * passwords, password change, accepted invitations, and refresh's check of the subject.
 *
 * Every password change bumps the subject's password version, conditionally on the version
 * it read, which makes reset and invitation tokens (they carry it as `pwv`) single-use even
 * under concurrent use; and it records `password_changed_at`, which ends the refresh tokens
 * issued before it.
 */
@Injectable()
export class CredentialsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly passwords: PasswordService,
    private readonly tokens: TokenService,
    private readonly principals: PrincipalRepository,
    private readonly mail: MailService,
  ) {}

  /** 401 for an unknown e-mail or a wrong password alike (same text, one hash check either way). */
  async login<K extends SubjectKind>(
    kind: K,
    email: string,
    password: string,
  ): Promise<SignedIn<SubjectTypes[K]>> {
    const subject = subjectOf(kind);
    // The refresh token dates from before the password check, so a concurrent password change ends it too.
    const issuedAt = Date.now();
    const found = await this.byEmail(subject, email, true);
    const valid = await this.passwords.verify(found?.passwordHash, password);
    if (!found || !valid) throw new InvalidCredentialsError(INVALID_LOGIN);
    const refusal = subject.loginRefusal(found);
    if (refusal) throw new ForbiddenError(refusal);

    found.lastLoginAt = new Date();
    await this.repository(subject).update({ id: found.id }, { lastLoginAt: found.lastLoginAt });
    return {
      accessToken: subject.signAccess(this.tokens, found),
      refreshToken: this.tokens.signRefresh(found.uuid, subject.isAdmin, issuedAt),
      tokenType: 'Bearer',
      expiresIn: this.tokens.accessTtlSeconds,
      subject: found as SubjectTypes[K],
    };
  }

  /**
   * Refresh, once the token's signature, expiry and the blacklist have passed: the subject must
   * still exist and be active, and its password must not have changed since the token was
   * issued; the new access token's claims come from the stored data.
   */
  async renewAccess(claims: RefreshClaims): Promise<string> {
    const subject = subjectOf(claims.isAdmin ? 'admin' : 'user');
    const found = await subject.findPrincipal(this.principals, claims.uuid);
    if (!found || !subject.mayRefresh(found)) {
      throw new InvalidCredentialsError('Account no longer exists or is deactivated');
    }
    // Refresh tokens carry `iat` with milliseconds (TokenService.signRefresh), so one issued
    // earlier in the same second as the change is refused and one issued after it is not; a
    // whole-second `iat` counts as the start of its second, which errs on the side of refusing.
    if (found.passwordChangedAt && Math.round(claims.iat * 1000) < found.passwordChangedAt.getTime()) {
      throw new InvalidCredentialsError(REVOKED);
    }
    return subject.signAccess(this.tokens, found);
  }

  /** Always succeeds (no account enumeration). */
  async forgotPassword(kind: SubjectKind, email: string): Promise<void> {
    const subject = subjectOf(kind);
    const found = await this.byEmail(subject, email, false);
    if (!found || !subject.mayRequestReset(found)) return;
    const token = this.tokens.signReset({
      uuid: found.uuid,
      email: found.email,
      isAdmin: subject.isAdmin,
      pwv: found.passwordVersion,
    });
    await subject.sendResetMail(this.mail, found, token);
  }

  /** The token is single-use: once the password version has moved on it is refused (401). */
  async resetPassword(kind: SubjectKind, token: string, password: string): Promise<void> {
    const subject = subjectOf(kind);
    const claims = this.tokens.verifyReset(token);
    if (claims.isAdmin !== subject.isAdmin) throw new InvalidCredentialsError(INVALID_RESET);
    const found = await this.repository(subject).findOne({ where: { uuid: claims.uuid } });
    if (!found || found.email !== claims.email) throw new InvalidCredentialsError(INVALID_RESET);
    const changed = await this.setPassword(subject, found.id, claims.pwv, password, {
      alsoSet: subject.resetAlsoSets,
    });
    if (!changed) throw new InvalidCredentialsError(INVALID_RESET);
  }

  async changePassword(
    kind: SubjectKind,
    id: number,
    currentPassword: string,
    newPassword: string,
  ): Promise<void> {
    const subject = subjectOf(kind);
    const stored = await this.repository(subject).findOne({
      where: { id },
      select: { id: true, passwordHash: true, passwordVersion: true },
    });
    if (!stored || !(await this.passwords.verify(stored.passwordHash, currentPassword))) {
      throw new BadRequestError('Current password is incorrect');
    }
    if (!(await this.setPassword(subject, id, stored.passwordVersion, newPassword))) {
      throw new ConflictError('The password was changed meanwhile; try again');
    }
  }

  /**
   * The invitation token for a member who has not set a password yet. It carries the member's
   * password version, so every invitation sent stays valid (for a day) until one is used.
   */
  invitationToken(user: User): string {
    return this.tokens.signVerification({
      uuid: user.uuid,
      email: user.email,
      purpose: 'invite',
      pwv: user.passwordVersion,
    });
  }

  /**
   * An invited member sets a password: the token must be an invitation whose `pwv` is still the
   * member's password version. The member becomes `active` and e-mail-verified in the same
   * conditional update that bumps the version, so the first invitation used ends every other
   * one (re-sent ones too). Returns the member's id.
   */
  async acceptInvitation(token: string, password: string): Promise<number> {
    const users = CREDENTIAL_SUBJECTS.user;
    const claims = this.tokens.verifyVerification(token);
    if (claims.purpose !== 'invite' || typeof claims.pwv !== 'number') {
      throw new InvalidCredentialsError(INVALID_INVITE);
    }
    const user = await this.repository(users).findOne({ where: { uuid: claims.uuid } });
    if (!user || user.email !== claims.email || user.passwordVersion !== claims.pwv) {
      throw new InvalidCredentialsError(INVALID_INVITE);
    }
    if (user.status === 'suspended') throw new ForbiddenError('User account is suspended');
    const at = new Date();
    const accepted = await this.setPassword(users, user.id, claims.pwv, password, {
      at,
      alsoSet: { status: 'active', emailVerifiedAt: user.emailVerifiedAt ?? at },
      onlyIf: ['status = :status', { status: user.status }],
    });
    if (!accepted) throw new InvalidCredentialsError(INVALID_INVITE);
    return user.id;
  }

  /**
   * Sets a new password only if the password version is still `expectedVersion`, bumps the
   * version and records the change time (`:changedAt` in `alsoSet`'s SQL), all in one UPDATE;
   * `onlyIf` is a further condition the row must still meet. False when no row matched.
   */
  private async setPassword<T extends Credentialed>(
    subject: CredentialSubject<T>,
    id: number,
    expectedVersion: number,
    password: string,
    options: { at?: Date; alsoSet?: QueryDeepPartialEntity<T>; onlyIf?: [string, ObjectLiteral] } = {},
  ): Promise<boolean> {
    const passwordHash = await this.passwords.hash(password);
    const changedAt = options.at ?? new Date();
    const qb = this.repository(subject)
      .createQueryBuilder()
      .update(subject.entity)
      .set({
        passwordHash,
        passwordVersion: () => 'password_version + 1',
        passwordChangedAt: changedAt,
        ...options.alsoSet,
      } as QueryDeepPartialEntity<T>)
      .where('id = :id AND password_version = :version', { id, version: expectedVersion })
      .setParameter('changedAt', changedAt);
    if (options.onlyIf) qb.andWhere(...options.onlyIf);
    const result = await qb.execute();
    return (result.affected ?? 0) === 1;
  }

  /** With its relations (CredentialSubject.withRelations), and its hash when `withHash`. */
  private byEmail<T extends Credentialed>(
    subject: CredentialSubject<T>,
    email: string,
    withHash: boolean,
  ): Promise<T | null> {
    const qb = subject.withRelations(this.repository(subject).createQueryBuilder(subject.alias));
    if (withHash) qb.addSelect(`${subject.alias}.passwordHash`);
    return qb.where(`${subject.alias}.email = :email`, { email }).getOne();
  }

  private repository<T extends Credentialed>(subject: CredentialSubject<T>): Repository<T> {
    return this.dataSource.getRepository(subject.entity);
  }
}

/** Where users and admins are handled alike, by their common credential columns. */
const subjectOf = (kind: SubjectKind): CredentialSubject<Credentialed> => CREDENTIAL_SUBJECTS[kind];
