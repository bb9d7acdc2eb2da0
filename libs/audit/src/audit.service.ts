import { Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { Between, DataSource } from 'typeorm';
import { ApiKeysService } from '@switchboard/api-keys';
import { Principal, listEnvelope, toPage } from '@switchboard/common';
import { insertable } from '@switchboard/database';
import { AuditLogEntity } from './entities/audit-log.entity';
import { ListAuditLogsQueryDto } from './dto/audit-log.dto';

export interface AuditEvent {
  request: FastifyRequest;
  principal: Principal | undefined;
  action: string;
  resourceType: string;
  resourceId: string | null;
  status: number;
  errorCode: string | null;
  apiKeyId?: string | null;
  /**
   * Who acted when no principal authenticated the request: a person who just signed up through
   * an invite acts as the user the acceptance created, in that user's organisation.
   */
  actor?: { organisationId: string; userId: string };
}

const FLUSH_INTERVAL_MS = 500;
const BATCH_SIZE = 200;
/** Past this the oldest pending records are written synchronously first; nothing is dropped. */
const MAX_QUEUE = 10_000;
const MAX_BODY_CHARS = 8_192;
const SECRET_FIELD = /key|secret|token|password|authorization|credential/i;

/** Secrets never reach the audit trail; long bodies are cut. */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > 6) return '[…]';
  if (Array.isArray(value)) return value.slice(0, 100).map((item) => redact(item, depth + 1));
  if (value && typeof value === 'object') {
    const result: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      result[key] =
        SECRET_FIELD.test(key) && typeof inner === 'string' ? '[redacted]' : redact(inner, depth + 1);
    }
    return result;
  }
  if (typeof value === 'string' && value.length > MAX_BODY_CHARS) return `${value.slice(0, MAX_BODY_CHARS)}…`;
  return value;
}

/**
 * Records administrative actions off the request path: `record` only queues; a timer writes
 * batches. A failed write keeps the batch for the next attempt, so the action is never blocked
 * and the record is never lost while the process lives; shutdown flushes what is left.
 */
@Injectable()
export class AuditService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(AuditService.name);
  private queue: AuditLogEntity[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly apiKeys: ApiKeysService,
  ) {}

  onModuleInit(): void {
    this.timer = setInterval(() => void this.flush(), FLUSH_INTERVAL_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }

  record(event: AuditEvent): void {
    const { request, principal, actor } = event;
    const body = request.body && typeof request.body === 'object' ? redact(request.body) : null;
    const query =
      request.query && typeof request.query === 'object'
        ? (redact(request.query) as Record<string, unknown>)
        : null;
    this.queue.push({
      id: randomUUID(),
      organisation_id: principal?.organisationId ?? actor?.organisationId ?? null,
      workspace_id: principal?.workspaceId ?? null,
      actor_type:
        principal?.user || actor ? 'user' : principal?.apiKey || event.apiKeyId ? 'api_key' : 'anonymous',
      user_id: principal?.user?.id ?? actor?.userId ?? null,
      api_key_id: principal?.apiKey?.id ?? event.apiKeyId ?? null,
      action: event.action,
      resource_type: event.resourceType,
      resource_id: event.resourceId,
      method: request.method,
      // The path only: query strings can carry secrets, and their redacted form is in query_params.
      uri: request.url.split('?')[0].slice(0, 2048),
      response_status_code: event.status,
      client_ip: request.ip ?? null,
      user_agent: (request.headers['user-agent'] ?? '').slice(0, 512) || null,
      request_id: String(request.id),
      trace_id: request.traceId ?? null,
      error_code: event.errorCode,
      request_body: body,
      query_params: query && Object.keys(query).length > 0 ? query : null,
      created_at: new Date(),
    });
    if (this.queue.length >= BATCH_SIZE) void this.flush();
    if (this.queue.length > MAX_QUEUE)
      this.logger.warn(`Audit queue at ${this.queue.length} records: the database is slow`);
  }

  /** Writes everything queued so far. */
  async flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (this.queue.length === 0) return;
    this.flushing = (async () => {
      while (this.queue.length > 0) {
        const batch = this.queue.slice(0, BATCH_SIZE);
        try {
          await this.attributeToOrganisation(batch);
          await this.dataSource.getRepository(AuditLogEntity).insert(insertable(batch));
          this.queue.splice(0, batch.length);
        } catch (error) {
          this.logger.error(`Audit write failed, will retry: ${(error as Error).message}`);
          break;
        }
      }
    })().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  /**
   * A refused authentication with a known key (expired, archived workspace, ended rotation) has no
   * principal, but the key says whose it is: without this the organisation could not see it.
   */
  private async attributeToOrganisation(batch: AuditLogEntity[]): Promise<void> {
    const unattributed = batch.filter((row) => !row.organisation_id && row.api_key_id);
    if (unattributed.length === 0) return;
    const owners = await this.apiKeys.ownersOf([...new Set(unattributed.map((row) => row.api_key_id!))]);
    for (const row of unattributed) {
      const owner = owners.get(row.api_key_id!);
      if (!owner) continue;
      row.organisation_id = owner.organisationId;
      row.workspace_id ??= owner.workspaceId;
    }
  }

  async list(principal: Principal, query: ListAuditLogsQueryDto) {
    const { skip, take } = toPage(query);
    const end = query.end_time ? new Date(query.end_time) : new Date();
    const start = query.start_time
      ? new Date(query.start_time)
      : new Date(end.getTime() - 30 * 24 * 3600 * 1000);
    const where: Record<string, unknown> = {
      organisation_id: principal.organisationId,
      created_at: Between(start, end),
    };
    if (query.method) where.method = query.method;
    if (query.uri) where.uri = query.uri;
    if (query.request_id) where.request_id = query.request_id;
    if (query.user_id) where.user_id = query.user_id;
    if (query.user_type) where.actor_type = query.user_type;
    if (query.workspace_id) where.workspace_id = query.workspace_id;
    if (query.response_status_code !== undefined) where.response_status_code = query.response_status_code;
    if (query.resource_type) where.resource_type = query.resource_type;
    if (query.action) where.action = query.action;
    if (query.client_ip) where.client_ip = query.client_ip;
    await this.flush();
    const [rows, total] = await this.dataSource
      .getRepository(AuditLogEntity)
      .findAndCount({ where, order: { created_at: 'DESC', id: 'ASC' }, skip, take });
    return listEnvelope(
      rows.map((row) => ({
        object: 'audit-log' as const,
        id: row.id,
        timestamp: row.created_at.toISOString(),
        method: row.method,
        uri: row.uri,
        request_id: row.request_id,
        trace_id: row.trace_id,
        request_body: row.request_body,
        query_params: row.query_params,
        user_id: row.user_id,
        user_type: row.actor_type,
        api_key_id: row.api_key_id,
        organisation_id: row.organisation_id,
        workspace_id: row.workspace_id,
        response_status_code: row.response_status_code,
        error_code: row.error_code,
        resource_type: row.resource_type,
        resource_id: row.resource_id,
        action: row.action,
        client_ip: row.client_ip,
        user_agent: row.user_agent,
      })),
      total,
    );
  }
}
