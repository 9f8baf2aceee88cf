import { ApiProperty } from '@nestjs/swagger';

export class PageMetaDto {
  page: number;
  limit: number;
  totalItems: number;
  totalPages: number;
}

export interface Page<T> {
  items: T[];
  meta: PageMetaDto;
}

export function toPage<T>(items: T[], totalItems: number, page: number, limit: number): Page<T> {
  return { items, meta: { page, limit, totalItems, totalPages: Math.ceil(totalItems / limit) } };
}

export const skipFor = (page: number, limit: number): number => (page - 1) * limit;

/** Base of the paged-list response DTOs (`items` is declared by each subclass for OpenAPI). */
export abstract class PageResponseDto {
  @ApiProperty({ type: PageMetaDto })
  meta: PageMetaDto;
}
