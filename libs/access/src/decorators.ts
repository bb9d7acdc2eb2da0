import {
  CallHandler,
  ExecutionContext,
  Injectable,
  NestInterceptor,
  SetMetadata,
  UseInterceptors,
  applyDecorators,
  createParamDecorator,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import type { Observable } from 'rxjs';
import type { Principal } from '@switchboard/common';
import { Permission } from './permissions';

export const ACCESS_METADATA = 'switchboard:access';

export type AccessRule =
  { public: true } | { public: false; permission: Permission | null; audit?: AuditTarget };

/** Names the resource an administrative action is on, for the audit trail. */
export interface AuditTarget {
  resource: string;
  /** Route parameter holding the target id (defaults to the first path parameter). */
  idParam?: string;
}

/** The audit module provides the interceptor that records an audited route's outcome under this token. */
export const AUDIT_INTERCEPTOR = Symbol('AUDIT_INTERCEPTOR');

/**
 * Bound only to routes that declare `audit`, so that every other route (the data plane above
 * all) runs with no interceptor at all. It lives here, not in the audit module, because that
 * module depends on this one; it finds the audit module's interceptor once, by token.
 */
@Injectable()
export class AuditedRouteInterceptor implements NestInterceptor {
  private delegate: NestInterceptor | undefined;

  constructor(private readonly modules: ModuleRef) {}

  intercept(
    context: ExecutionContext,
    next: CallHandler,
  ): Observable<unknown> | Promise<Observable<unknown>> {
    this.delegate ??= this.modules.get<NestInterceptor>(AUDIT_INTERCEPTOR, { strict: false });
    return this.delegate.intercept(context, next);
  }
}

/**
 * The route needs an authenticated principal holding `permission`. Declares only; the global
 * guard decides. With `audit`, the route's outcome also goes to the audit trail.
 */
export const Authenticated = (options: { permission: Permission | null; audit?: AuditTarget }) => {
  const rule = SetMetadata(ACCESS_METADATA, { public: false, ...options } satisfies AccessRule);
  return options.audit ? applyDecorators(rule, UseInterceptors(AuditedRouteInterceptor)) : rule;
};

/** The route is open to anyone (health, invite acceptance). */
export const Public = () => SetMetadata(ACCESS_METADATA, { public: true } satisfies AccessRule);

/** The authenticated principal of this request. */
export const CurrentPrincipal = createParamDecorator(
  (_data: unknown, context: ExecutionContext): Principal => {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (!request.principal) throw new Error('CurrentPrincipal used on a route without @Authenticated');
    return request.principal;
  },
);
