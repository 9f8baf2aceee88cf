import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { QueryInt } from '../validation/query-transforms';

export class PageQueryDto {
  /** Page number, from 1. */
  @IsOptional()
  @QueryInt()
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  page: number = 1;

  /** Items per page, 1..100. */
  @IsOptional()
  @QueryInt()
  @IsInt()
  @Min(1)
  @Max(100)
  limit: number = 20;
}
