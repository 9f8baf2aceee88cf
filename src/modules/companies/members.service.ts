import { Injectable } from '@nestjs/common';
import { ConflictError } from '../../common/errors/domain-error';
import { Page, toPage } from '../../common/pagination/page';
import { TransactionService } from '../../database/transaction.service';
import { CompanyMembersService } from '../users/company-members.service';
import type { User } from '../users/entities/user.entity';
import { UsersService } from '../users/users.service';
import { InviteMemberDto, ListMembersQueryDto } from './dto/company-requests.dto';
import { MemberDto } from './dto/company-response.dto';
import { Company } from './entities/company.entity';

export interface Invitation {
  member: MemberDto;
  /** False when the e-mail was already invited to this company and the invitation was re-sent. */
  created: boolean;
}

/** The users of a company: list, invite (owners), remove (owners). */
@Injectable()
export class MembersService {
  constructor(
    private readonly transactions: TransactionService,
    private readonly members: CompanyMembersService,
    private readonly usersService: UsersService,
  ) {}

  /** Oldest first, so the founding owner leads. */
  async list(company: Company, q: ListMembersQueryDto): Promise<Page<MemberDto>> {
    const [items, total] = await this.members.page(company.id, q);
    return toPage(
      items.map((u) => MemberDto.fromMember(u, company.uuid)),
      total,
      q.page,
      q.limit,
    );
  }

  /**
   * Creates a `pending` member (role `member`) with its contact and e-mails an invitation. The
   * same e-mail again, while that member of this company has not accepted yet, re-sends the
   * invitation (the earlier one stays valid). An e-mail that belongs to another company's user,
   * or to a member of this company who already accepted, is a 409.
   */
  async invite(company: Company, dto: InviteMemberDto): Promise<Invitation> {
    const result = await this.transactions.run(async (em) => {
      const existing = await this.members.findByEmail(em, dto.email);
      if (existing) {
        if (existing.companyId !== company.id) {
          throw new ConflictError('This e-mail address belongs to a user of another company');
        }
        if (existing.status !== 'pending' || existing.passwordHash) {
          throw new ConflictError('This user is already a member of the company');
        }
        return { user: existing, created: false };
      }
      const user = await this.members.createPending(em, {
        companyId: company.id,
        email: dto.email,
        fullName: dto.fullName,
      });
      return { user, created: true };
    });
    await this.usersService.sendInvitationMail(result.user, result.user.contact.fullName, company.name);
    return { member: MemberDto.fromMember(result.user, company.uuid), created: result.created };
  }

  /**
   * Removes a user of the company: the user row and its contact are deleted, not deactivated.
   * Deleting frees the e-mail address (the person may later join another company, which a
   * deactivated row would block with a 409), and nothing needs the row afterwards: the
   * company's data belongs to the company, the user's notifications go with it (ON DELETE
   * CASCADE), and the access guard and refresh re-read the user, so its tokens stop working
   * at once (401). The last owner cannot be removed (409), so a company always has an owner.
   * `target` is a member of the caller's company, loaded by the ownership guard (404 there).
   */
  async remove(target: Pick<User, 'id' | 'companyId' | 'companyRole' | 'contactId'>): Promise<void> {
    await this.transactions.run(async (em) => {
      if (target.companyRole === 'owner') {
        const owners = await this.members.lockOwners(em, target.companyId);
        if (owners <= 1) throw new ConflictError('The last owner of the company cannot be removed');
      }
      await this.members.delete(em, target);
    });
  }
}
