import { ApiProperty } from '@nestjs/swagger';
import { PageResponseDto } from '../../../common/pagination/page';
import type { User } from '../entities/user.entity';
import { CompanySummaryDto, ContactDto, UserDto } from './user-response.dto';

/** A user with its contact and company, as admins see it. */
export class AdminUserDto extends UserDto {
  contact: ContactDto;
  company: CompanySummaryDto;

  /** `user` must come with its contact and company loaded. */
  static fromUser(user: User): AdminUserDto {
    return {
      ...UserDto.from(user, user.company.uuid, user.contact.uuid),
      contact: ContactDto.from(user.contact),
      company: CompanySummaryDto.from(user.company),
    };
  }
}

export class AdminUserPageDto extends PageResponseDto {
  @ApiProperty({ type: [AdminUserDto] }) items: AdminUserDto[];
}
