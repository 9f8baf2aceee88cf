import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { InvalidCredentialsError } from '../../common/errors/domain-error';
import { CredentialsService } from '../auth/credentials.service';
import { TokenService } from '../auth/token.service';
import { MailService } from '../mail/mail.service';
import { AcceptInviteDto, InvitationAcceptedDto } from './dto/invitation.dto';
import { UpdateMeDto } from './dto/user-requests.dto';
import { EmailVerifiedDto, MeDto, UserDto } from './dto/user-response.dto';
import { Contact } from './entities/contact.entity';
import { User } from './entities/user.entity';

@Injectable()
export class UsersService {
  constructor(
    @InjectRepository(User) private readonly users: Repository<User>,
    @InjectRepository(Contact) private readonly contacts: Repository<Contact>,
    private readonly tokens: TokenService,
    private readonly credentials: CredentialsService,
    private readonly mail: MailService,
  ) {}

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

  /** The invited member sets a password (CredentialsService); answers with the member. */
  async acceptInvite(dto: AcceptInviteDto): Promise<InvitationAcceptedDto> {
    const id = await this.credentials.acceptInvitation(dto.token, dto.password);
    const accepted = await this.withRelations().where('user.id = :id', { id }).getOneOrFail();
    return { user: UserDto.from(accepted, accepted.company.uuid, accepted.contact.uuid) };
  }

  /**
   * E-mails an invitation link (`{APP_URL}/accept-invite?token=…`) to a member who has not set a
   * password yet. The token carries the member's password version, so every invitation sent
   * stays valid (for a day) until one of them is used.
   */
  async sendInvitationMail(user: User, fullName: string, companyName: string): Promise<void> {
    await this.mail.sendInvitation(user.email, fullName, companyName, this.credentials.invitationToken(user));
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

  private withRelations() {
    return this.users
      .createQueryBuilder('user')
      .innerJoinAndSelect('user.contact', 'contact')
      .innerJoinAndSelect('user.company', 'company');
  }
}
