import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';
import { QueryInt } from '../validation/query-transforms';
import { Omittable } from '../validation/presence';

/**
 * Paging query of README "Lists". Both fields are optional (their defaults apply): the
 * `@ApiPropertyOptional()` says so to the swagger plugin, which reads optionality from `?` only.
 */
export class PageQueryDto {
  /** Page number, from 1. */
  @ApiPropertyOptional()
  @Omittable()
  @QueryInt()
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  page: number = 1;

  /** Items per page, 1..100. */
  @ApiPropertyOptional()
  @Omittable()
  @QueryInt()
  @IsInt()
  @Min(1)
  @Max(100)
  limit: number = 20;
}
