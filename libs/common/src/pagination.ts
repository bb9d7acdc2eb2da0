import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;

/**
 * Zero-based paging. The reference spells it `current_page`/`page_size` on most lists and
 * `currentPage`/`pageSize` on users and invites; both spellings are accepted everywhere.
 */
export class PageQueryDto {
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  current_page?: number;

  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(MAX_PAGE_SIZE)
  page_size?: number;

  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  currentPage?: number;

  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(MAX_PAGE_SIZE)
  pageSize?: number;
}

export interface Page {
  skip: number;
  take: number;
}

export function toPage(query: PageQueryDto): Page {
  const size = query.page_size ?? query.pageSize;
  const take = size === undefined || size === 0 ? DEFAULT_PAGE_SIZE : size;
  return { skip: (query.current_page ?? query.currentPage ?? 0) * take, take };
}

export interface ListEnvelope<T> {
  object: 'list';
  total: number;
  data: T[];
}

export function listEnvelope<T>(data: T[], total: number): ListEnvelope<T> {
  return { object: 'list', total, data };
}
