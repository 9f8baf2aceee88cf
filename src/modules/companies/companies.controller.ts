import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { Page } from '../../common/pagination/page';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { CurrentUser, OwnerAuth, UserAuth } from '../auth/access.decorators';
import { CompanyScoped } from '../auth/guards/company-ownership.guard';
import type { User } from '../users/entities/user.entity';
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
import { uuidPipe } from '../../common/validation/uuid-param.pipe';

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

  @Get()
  @UserAuth()
  @CompanyScoped()
  @ResponseMessage('Company fetched')
  @ApiEnvelope(CompanyDto)
  get(@CurrentUser() user: User): Promise<CompanyDto> {
    return this.companies.get(user.companyId);
  }

  @Patch()
  @OwnerAuth()
  @CompanyScoped()
  @ResponseMessage('Company updated')
  @ApiEnvelope(CompanyDto)
  @ApiErrors(400)
  update(@CurrentUser() user: User, @Body() dto: UpdateCompanyDto): Promise<CompanyDto> {
    return this.companies.update(user.companyId, dto);
  }

  @Get('usage')
  @UserAuth()
  @CompanyScoped()
  @ResponseMessage('Usage fetched')
  @ApiEnvelope(UsageDto)
  @ApiErrors(400)
  usage(@CurrentUser() user: User, @Query() query: UsageQueryDto): Promise<UsageDto> {
    return this.companies.usage(user.companyId, query);
  }

  @Post('relay-password')
  @OwnerAuth()
  @CompanyScoped()
  @HttpCode(200)
  @ResponseMessage('Relay password generated; it is shown only this once')
  @ApiEnvelope(RelayCredentialsDto)
  relayPassword(@CurrentUser() user: User): Promise<RelayCredentialsDto> {
    return this.companies.resetRelayPassword(user.companyId);
  }

  @Put('allowed-ips')
  @OwnerAuth()
  @CompanyScoped()
  @ResponseMessage('Allowed IPs updated')
  @ApiEnvelope(AllowedIpsResultDto)
  @ApiErrors(400)
  allowedIps(@CurrentUser() user: User, @Body() dto: AllowedIpsDto): Promise<AllowedIpsResultDto> {
    return this.companies.setAllowedIps(user.companyId, dto);
  }

  @Get('users')
  @UserAuth()
  @CompanyScoped()
  @ResponseMessage('Members fetched')
  @ApiEnvelope(MemberPageDto)
  @ApiErrors(400)
  listMembers(@CurrentUser() user: User, @Query() query: ListMembersQueryDto): Promise<Page<MemberDto>> {
    return this.members.list(user.company, query);
  }

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

  @Delete('users/:userUuid')
  @OwnerAuth()
  @CompanyScoped()
  @ResponseMessage('Member removed')
  @ApiEnvelope()
  @ApiErrors(400, 404, 409)
  async removeMember(
    @CurrentUser() user: User,
    @Param('userUuid', uuidPipe) userUuid: string,
  ): Promise<object> {
    await this.members.remove(user.company, userUuid);
    return {};
  }
}
