import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { Repository } from 'typeorm';
import {
  BadRequestError,
  ConflictError,
  ForbiddenError,
  InvalidCredentialsError,
} from '../../common/errors/domain-error';
import { TransactionService } from '../../database/transaction.service';
import { PasswordService } from '../auth/password.service';
import { TokenService } from '../auth/token.service';
import { Company } from '../companies/entities/company.entity';
import { MailService } from '../mail/mail.service';
import { NotificationsService } from '../notifications/notifications.service';
import { AcceptInviteDto, InvitationAcceptedDto } from './dto/invitation.dto';
import {
  ChangePasswordDto,
  LoginDto,
  RegisterDto,
  ResetPasswordDto,
  UpdateMeDto,
} from './dto/user-requests.dto';
import {
  CompanySummaryDto,
  EmailVerifiedDto,
  MeDto,
  RegisteredDto,
  UserDto,
  UserLoginDto,
} from './dto/user-response.dto';
import { Contact } from './entities/contact.entity';
import { User } from './entities/user.entity';

const INVALID_LOGIN = 'Invalid email or password';
const INVALID_RESET = 'Invalid or expired reset token';
const INVALID_INVITE = 'Invalid or expired invitation';

@Injectable()
export class UsersService {
  constructor(
    @InjectRepository(User) private readonly users: Repository<User>,
    @InjectRepository(Contact) private readonly contacts: Repository<Contact>,
    private readonly transactions: TransactionService,
    private readonly passwords: PasswordService,
    private readonly tokens: TokenService,
    private readonly mail: MailService,
    private readonly notifications: NotificationsService,
  ) {}

  /**
   * Company, owner user (`pending`), contact and the admins' `company.registered`
   * notifications in one transaction; then the verification e-mail.
   */
  async register(dto: RegisterDto): Promise<RegisteredDto> {
    if (await this.users.exists({ where: { email: dto.email } })) {
      throw new ConflictError('Email is already registered');
    }
    const passwordHash = await this.passwords.hash(dto.password);
    const user = await this.transactions.run(async (em) => {
      const company = await em.save(
        em.create(Company, {
          name: dto.companyName,
          phone: dto.phone ?? null,
          relayUsername: newRelayUsername(),
        }),
      );
      const contact = await em.save(
        em.create(Contact, { companyId: company.id, fullName: dto.fullName, phone: dto.phone ?? null }),
      );
      const created = await em.save(
        em.create(User, {
          email: dto.email,
          passwordHash,
          status: 'pending',
          companyRole: 'owner',
          companyId: company.id,
          contactId: contact.id,
        }),
      );
      await this.notifications.notifyAdmins(
        ['superAdmin', 'admin'],
        {
          type: 'company.registered',
          title: `New company: ${company.name}`,
          body: `${company.name} signed up (${dto.email}).`,
          data: { companyUuid: company.uuid },
        },
        em,
      );
      return Object.assign(created, { company, contact });
    });
    await this.sendVerificationMail(user);
    return {
      user: UserDto.from(user, user.company.uuid, user.contact.uuid),
      company: CompanySummaryDto.from(user.company),
    };
  }

  async login(dto: LoginDto): Promise<UserLoginDto> {
    const user = await this.withRelations()
      .addSelect('user.passwordHash')
      .where('user.email = :email', { email: dto.email })
      .getOne();
    const valid = await this.passwords.verify(user?.passwordHash, dto.password);
    if (!user || !valid) throw new InvalidCredentialsError(INVALID_LOGIN);
    if (user.status === 'pending') throw new ForbiddenError('Email address is not verified');
    if (user.status === 'suspended') throw new ForbiddenError('User account is suspended');

    user.lastLoginAt = new Date();
    await this.users.update({ id: user.id }, { lastLoginAt: user.lastLoginAt });
    return {
      accessToken: this.tokens.signUserAccess({
        userUuid: user.uuid,
        contactUuid: user.contact.uuid,
        companyUuid: user.company.uuid,
      }),
      refreshToken: this.tokens.signRefresh(user.uuid, false),
      tokenType: 'Bearer',
      expiresIn: this.tokens.accessTtlSeconds,
      ...MeDto.from(user),
    };
  }

  async verifyEmail(token: string): Promise<EmailVerifiedDto> {
    const claims = this.tokens.verifyVerification(token);
    if (claims.purpose !== 'verify-email') throw new InvalidCredentialsError('Invalid or expired token');
    const user = await this.users.findOne({ where: { uuid: claims.uuid } });
    if (!user || user.email !== claims.email) throw new InvalidCredentialsError('Invalid or expired token');
    if (user.emailVerifiedAt) return { verified: true, alreadyVerified: true };
    await this.users.update(
      { id: user.id },
      { emailVerifiedAt: new Date(), ...(user.status === 'pending' ? { status: 'active' as const } : {}) },
    );
    return { verified: true, alreadyVerified: false };
  }

  /**
   * Always succeeds (no account enumeration); mails only an existing, unverified address. An
   * invited member who has no password yet gets the invitation again instead: a verification
   * link would activate an account nobody can log in to.
   */
  async resendVerification(email: string): Promise<void> {
    const user = await this.withRelations()
      .addSelect('user.passwordHash')
      .where('user.email = :email', { email })
      .getOne();
    if (user && !user.emailVerifiedAt) await this.sendVerificationOrInvitation(user);
  }

  /** `user` must come with its contact, its company and its password hash selected. */
  async sendVerificationOrInvitation(user: User): Promise<void> {
    if (user.passwordHash) await this.sendVerificationMail(user);
    else await this.sendInvitationMail(user, user.contact.fullName, user.company.name);
  }

  /** Always succeeds (no account enumeration). */
  async forgotPassword(email: string): Promise<void> {
    const user = await this.withRelations().where('user.email = :email', { email }).getOne();
    if (!user) return;
    const token = this.tokens.signReset({
      uuid: user.uuid,
      email: user.email,
      isAdmin: false,
      pwv: user.passwordVersion,
    });
    await this.mail.sendUserPasswordReset(user.email, user.contact.fullName, token);
  }

  async resetPassword(dto: ResetPasswordDto): Promise<void> {
    const claims = this.tokens.verifyReset(dto.token);
    if (claims.isAdmin) throw new InvalidCredentialsError(INVALID_RESET);
    const user = await this.users.findOne({ where: { uuid: claims.uuid } });
    if (!user || user.email !== claims.email) throw new InvalidCredentialsError(INVALID_RESET);
    const changed = await this.setPassword(user.id, claims.pwv, dto.password);
    if (!changed) throw new InvalidCredentialsError(INVALID_RESET);
  }

  /**
   * An invited member sets a password: the token must be an invitation whose `pwv` is still
   * the member's password version. Setting the password bumps the version in the same
   * conditional update, so the first invitation used ends every other one (re-sent ones too).
   */
  async acceptInvite(dto: AcceptInviteDto): Promise<InvitationAcceptedDto> {
    const claims = this.tokens.verifyVerification(dto.token);
    if (claims.purpose !== 'invite' || typeof claims.pwv !== 'number') {
      throw new InvalidCredentialsError(INVALID_INVITE);
    }
    const user = await this.users.findOne({ where: { uuid: claims.uuid } });
    if (!user || user.email !== claims.email || user.passwordVersion !== claims.pwv) {
      throw new InvalidCredentialsError(INVALID_INVITE);
    }
    if (user.status === 'suspended') throw new ForbiddenError('User account is suspended');
    const passwordHash = await this.passwords.hash(dto.password);
    const now = new Date();
    const result = await this.users
      .createQueryBuilder()
      .update(User)
      .set({
        passwordHash,
        passwordVersion: () => 'password_version + 1',
        status: 'active',
        emailVerifiedAt: user.emailVerifiedAt ?? now,
      })
      .where('id = :id AND password_version = :version AND status = :status', {
        id: user.id,
        version: claims.pwv,
        status: user.status,
      })
      .execute();
    if ((result.affected ?? 0) !== 1) throw new InvalidCredentialsError(INVALID_INVITE);
    const accepted = await this.withRelations().where('user.id = :id', { id: user.id }).getOneOrFail();
    return { user: UserDto.from(accepted, accepted.company.uuid, accepted.contact.uuid) };
  }

  /**
   * E-mails an invitation link (`{APP_URL}/accept-invite?token=…`) to a member who has not set a
   * password yet. The token carries the member's password version, so every invitation sent
   * stays valid (for a day) until one of them is used.
   */
  async sendInvitationMail(user: User, fullName: string, companyName: string): Promise<void> {
    const token = this.tokens.signVerification({
      uuid: user.uuid,
      email: user.email,
      purpose: 'invite',
      pwv: user.passwordVersion,
    });
    await this.mail.sendInvitation(user.email, fullName, companyName, token);
  }

  /** E-mails a verification link; `user` must come with its contact. */
  async sendVerificationMail(user: User): Promise<void> {
    const token = this.tokens.signVerification({
      uuid: user.uuid,
      email: user.email,
      purpose: 'verify-email',
    });
    await this.mail.sendVerification(user.email, user.contact.fullName, token);
  }

  me(user: User): MeDto {
    return MeDto.from(user);
  }

  async updateMe(user: User, dto: UpdateMeDto): Promise<MeDto> {
    const changes: Partial<Contact> = {};
    if (dto.fullName !== undefined) changes.fullName = dto.fullName;
    if (dto.phone !== undefined) changes.phone = dto.phone || null;
    if (dto.position !== undefined) changes.position = dto.position || null;
    if (Object.keys(changes).length) {
      await this.contacts.update({ id: user.contactId }, changes);
      Object.assign(user.contact, changes);
    }
    return MeDto.from(user);
  }

  async changePassword(user: User, dto: ChangePasswordDto): Promise<void> {
    const stored = await this.users.findOne({
      where: { id: user.id },
      select: { id: true, passwordHash: true, passwordVersion: true },
    });
    if (!stored || !(await this.passwords.verify(stored.passwordHash, dto.currentPassword))) {
      throw new BadRequestError('Current password is incorrect');
    }
    if (!(await this.setPassword(user.id, stored.passwordVersion, dto.newPassword))) {
      throw new ConflictError('The password was changed meanwhile; try again');
    }
  }

  /**
   * Sets a new password only if the password version is still `expectedVersion`, and bumps
   * the version: this is what makes reset links single-use, even under concurrent use.
   */
  private async setPassword(userId: number, expectedVersion: number, password: string): Promise<boolean> {
    const passwordHash = await this.passwords.hash(password);
    const result = await this.users
      .createQueryBuilder()
      .update(User)
      .set({ passwordHash, passwordVersion: () => 'password_version + 1' })
      .where('id = :id AND password_version = :version', { id: userId, version: expectedVersion })
      .execute();
    return (result.affected ?? 0) === 1;
  }

  private withRelations() {
    return this.users
      .createQueryBuilder('user')
      .innerJoinAndSelect('user.contact', 'contact')
      .innerJoinAndSelect('user.company', 'company');
  }
}

/** `r-` and 8 lower-case base-36 characters, e.g. `r-7f3k2q9d`. */
function newRelayUsername(): string {
  const alphabet = '0123456789abcdefghijklmnopqrstuvwxyz';
  const bytes = randomBytes(8);
  let name = 'r-';
  for (const b of bytes) name += alphabet[b % 36];
  return name;
}
