import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Put, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { Page } from '../../common/pagination/page';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { CurrentUser, OwnerAuth, UserAuth } from '../auth/access.decorators';
import { CompanyScoped, OwnedEntity } from '../auth/guards/company-ownership.guard';
import type { User } from '../users/entities/user.entity';
import { OwnedMember } from '../users/owned-member.decorator';
import { CompaniesService } from './companies.service';
import {
  AllowedIpsDto,
  InviteMemberDto,
  ListMembersQueryDto,
  UpdateCompanyDto,
  UsageQueryDto,
} from './dto/company-requests.dto';
import {
  AllowedIpsResultDto,
  CompanyDto,
  MemberDto,
  MemberPageDto,
  RelayCredentialsDto,
  UsageDto,
} from './dto/company-response.dto';
import { MembersService } from './members.service';

/**
 * The caller's own company. Every route is behind @CompanyScoped(): `:companyUuid` must be the
 * caller's company (403 otherwise, a malformed one included), so handlers work on
 * `user.company` read by the access guard. 400 (bad input) and 404 (the company or a member
 * gone) are documented on every route.
 */
@ApiTags('companies')
@ApiErrors(400, 404)
@Controller('api/v1/companies/:companyUuid')
export class CompaniesController {
  constructor(
    private readonly companies: CompaniesService,
    private readonly members: MembersService,
  ) {}

  /**
   * Read the caller's company.
   *
   * @remarks
   * Any active user of the company. Returns the company with its subscription, quota, relayStatus and
   * relayUsername. 403 when `companyUuid` is another company's.
   */
  @Get()
  @UserAuth()
  @CompanyScoped()
  @ResponseMessage('Company fetched')
  @ApiEnvelope(CompanyDto)
  get(@CurrentUser() user: User): Promise<CompanyDto> {
    return this.companies.get(user.companyId);
  }

  /**
   * Update the company's profile.
   *
   * @remarks
   * Owner only. Changes the fields given among the name, legal name, tax id, address, city, country, phone
   * and website. 403 for a member who is not an owner, or for another company's `companyUuid`.
   */
  @Patch()
  @OwnerAuth()
  @CompanyScoped()
  @ResponseMessage('Company updated')
  @ApiEnvelope(CompanyDto)
  @ApiErrors(400)
  update(@CurrentUser() user: User, @Body() dto: UpdateCompanyDto): Promise<CompanyDto> {
    return this.companies.update(user.companyId, dto);
  }

  /**
   * Read the company's sending usage.
   *
   * @remarks
   * Any active user of the company. Returns the quota, used and remaining counts of the current period with
   * its start and end, and a count per day between `from` and `to`. A company that never paid has 0, 0, 0 and
   * no period dates. 400 when `from` is after `to`.
   */
  @Get('usage')
  @UserAuth()
  @CompanyScoped()
  @ResponseMessage('Usage fetched')
  @ApiEnvelope(UsageDto)
  @ApiErrors(400)
  usage(@CurrentUser() user: User, @Query() query: UsageQueryDto): Promise<UsageDto> {
    return this.companies.usage(user.companyId, query);
  }

  /**
   * Generate a new SMTP relay password.
   *
   * @remarks
   * Owner only. Returns the relay username and a new password, shown only this once: store it now. The old
   * password stops working at once.
   */
  @Post('relay-password')
  @OwnerAuth()
  @CompanyScoped()
  @HttpCode(200)
  @ResponseMessage('Relay password generated; it is shown only this once')
  @ApiEnvelope(RelayCredentialsDto)
  relayPassword(@CurrentUser() user: User): Promise<RelayCredentialsDto> {
    return this.companies.resetRelayPassword(user.companyId);
  }

  /**
   * Replace the company's allowed IP list.
   *
   * @remarks
   * Owner only. `ips` is the whole new list of addresses allowed to relay the company's mail: at most 50 IPv4
   * or IPv6 addresses or CIDR ranges. 400 for an invalid entry or too many.
   */
  @Put('allowed-ips')
  @OwnerAuth()
  @CompanyScoped()
  @ResponseMessage('Allowed IPs updated')
  @ApiEnvelope(AllowedIpsResultDto)
  @ApiErrors(400)
  allowedIps(@CurrentUser() user: User, @Body() dto: AllowedIpsDto): Promise<AllowedIpsResultDto> {
    return this.companies.setAllowedIps(user.companyId, dto);
  }

  /**
   * List the company's members.
   *
   * @remarks
   * Any active user of the company. Paged, with each member's role (owner or member), status, e-mail
   * verification, last login and contact.
   */
  @Get('users')
  @UserAuth()
  @CompanyScoped()
  @ResponseMessage('Members fetched')
  @ApiEnvelope(MemberPageDto)
  @ApiErrors(400)
  listMembers(@CurrentUser() user: User, @Query() query: ListMembersQueryDto): Promise<Page<MemberDto>> {
    return this.members.list(user.company, query);
  }

  /**
   * Invite a member to the company.
   *
   * @remarks
   * Owner only. Creates the member as `pending` and e-mails an invitation, to be accepted with POST
   * /api/v1/users/accept-invite: 201. Inviting a pending member's address again sends the invitation again:
   * 200. 409 when the address belongs to a user of another company, or to a member who has already joined.
   */
  @Post('users')
  @OwnerAuth()
  @CompanyScoped()
  @ResponseMessage('Invitation sent')
  @ApiEnvelope(MemberDto, 201, 'Member created and invited')
  @ApiEnvelope(MemberDto, 200, 'The e-mail was already invited: the invitation is sent again')
  @ApiErrors(400, 409)
  async invite(
    @CurrentUser() user: User,
    @Body() dto: InviteMemberDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<MemberDto> {
    const { member, created } = await this.members.invite(user.company, dto);
    if (!created) void reply.status(200);
    return member;
  }

  /**
   * Remove a member from the company.
   *
   * @remarks
   * Owner only. 409 when the member is the company's last owner; 404 when no member of the company has this
   * uuid.
   */
  @Delete('users/:userUuid')
  @OwnerAuth()
  @CompanyScoped()
  @OwnedMember()
  @ResponseMessage('Member removed')
  @ApiEnvelope()
  @ApiErrors(409)
  async removeMember(@OwnedEntity('userUuid') member: User): Promise<object> {
    await this.members.remove(member);
    return {};
  }
}
