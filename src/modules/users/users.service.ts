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

@Injectable()
export class UsersService {
  constructor(
    @InjectRepository(User) private readonly users: Repository<User>,
    @InjectRepository(Contact) private readonly contacts: Repository<Contact>,
    private readonly transactions: TransactionService,
    private readonly passwords: PasswordService,
    private readonly tokens: TokenService,
    private readonly mail: MailService,
  ) {}

  /** Company, owner user (`pending`) and contact in one transaction; then the verification e-mail. */
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
      return Object.assign(created, { company, contact });
    });
    await this.sendVerification(user);
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

  /** Always succeeds (no account enumeration); mails only an existing, unverified address. */
  async resendVerification(email: string): Promise<void> {
    const user = await this.withRelations().where('user.email = :email', { email }).getOne();
    if (user && !user.emailVerifiedAt) await this.sendVerification(user);
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

  private async sendVerification(user: User): Promise<void> {
    const token = this.tokens.signVerification({
      uuid: user.uuid,
      email: user.email,
      purpose: 'verify-email',
    });
    await this.mail.sendVerification(user.email, user.contact.fullName, token);
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
