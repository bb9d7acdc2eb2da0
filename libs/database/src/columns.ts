import { Column, ColumnOptions, CreateDateColumn, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';

/**
 * Entities serve both SQLite and PostgreSQL, which name their timestamp and JSON types
 * differently. The dialect is read from DATABASE_URL when the entity files load, which is the
 * same variable the data source is built from, so the two always agree in one process.
 */
export const IS_POSTGRES = /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? '');

const DATE_TYPE = IS_POSTGRES ? 'timestamptz' : 'datetime';
const JSON_TYPE = IS_POSTGRES ? 'jsonb' : 'simple-json';
const ID_TYPE = IS_POSTGRES ? 'uuid' : 'varchar';

export function IdColumn(): PropertyDecorator {
  return PrimaryColumn({ type: ID_TYPE, length: IS_POSTGRES ? undefined : 36 });
}

export function RefColumn(options: ColumnOptions = {}): PropertyDecorator {
  return Column({ type: ID_TYPE, length: IS_POSTGRES ? undefined : 36, ...options });
}

export function DateTimeColumn(options: ColumnOptions = {}): PropertyDecorator {
  return Column({ type: DATE_TYPE, ...options });
}

export function JsonColumn(options: ColumnOptions = {}): PropertyDecorator {
  return Column({ type: JSON_TYPE, ...options });
}

export function CreatedAtColumn(): PropertyDecorator {
  return CreateDateColumn({ type: DATE_TYPE, name: 'created_at' });
}

export function UpdatedAtColumn(): PropertyDecorator {
  return UpdateDateColumn({ type: DATE_TYPE, name: 'updated_at' });
}

/**
 * TypeORM's insert() types reject JSON columns typed as `unknown` or open records; the entities
 * we insert are complete, so this narrows the type without changing the value.
 */
export function insertable<T>(entity: T | T[]): QueryDeepPartialEntity<T> | QueryDeepPartialEntity<T>[] {
  return entity as QueryDeepPartialEntity<T>;
}
