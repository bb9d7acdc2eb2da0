import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { ACCESS_METADATA, AccessRule } from '@switchboard/access';
import { AuditService, auditAction, auditResourceId, auditTargetOf } from '@switchboard/audit';
import { AppError, Principal } from '@switchboard/common';
import { AuthErrors } from './auth.errors';
import { AuthenticationService, KeyCarrier } from './authentication.service';

export const API_KEY_HEADER = 'x-gateway-api-key';

/**
 * The one global guard. Default deny: a route without @Public or @Authenticated is refused.
 * Refusals of administrative routes are audited here, because a refused request never reaches
 * the audit interceptor.
 */
@Injectable()
export class AccessGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authentication: AuthenticationService,
    private readonly audit: AuditService,
  ) {}

  /** A route's rule never changes: read once per (controller, handler), not on every request. */
  private readonly rules = new WeakMap<object, WeakMap<object, AccessRule | null>>();

  private ruleOf(context: ExecutionContext): AccessRule | undefined {
    const handler = context.getHandler();
    const owner = context.getClass();
    let byHandler = this.rules.get(owner);
    if (!byHandler) {
      byHandler = new WeakMap();
      this.rules.set(owner, byHandler);
    }
    let rule = byHandler.get(handler);
    if (rule === undefined) {
      rule =
        this.reflector.getAllAndOverride<AccessRule | undefined>(ACCESS_METADATA, [handler, owner]) ?? null;
      byHandler.set(handler, rule);
    }
    return rule ?? undefined;
  }

  /**
   * Synchronous for a key the cache knows (the data plane's case): no promise, so Nest goes on to
   * the handler without the hops an async guard costs. A cache miss returns a promise.
   */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const rule = this.ruleOf(context);
    if (rule?.public) return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const failure = { apiKeyId: null as string | null };
    const refuse = (error: unknown): never => {
      this.auditRefusal(context, request, failure.apiKeyId, error);
      throw error;
    };
    if (!rule) return refuse(AuthErrors.routeNotExposed());
    const admit = (principal: Principal): boolean => {
      request.principal = principal;
      if (rule.permission && !principal.permissions.has(rule.permission)) {
        throw AuthErrors.missingPermission(rule.permission);
      }
      return true;
    };
    try {
      const header = request.headers[API_KEY_HEADER];
      const raw = Array.isArray(header) ? header[0] : header;
      if (!raw) throw AuthErrors.missingKey();
      const found = this.authentication.authenticate(
        raw,
        (_code, apiKeyId) => {
          failure.apiKeyId = apiKeyId;
        },
        request.raw.socket as KeyCarrier,
      );
      if (found instanceof Promise) return found.then(admit).catch(refuse);
      return admit(found);
    } catch (error) {
      return refuse(error);
    }
  }

  /** Refusals of audited (administrative) routes go to the audit trail. */
  private auditRefusal(
    context: ExecutionContext,
    request: FastifyRequest,
    apiKeyId: string | null,
    error: unknown,
  ): void {
    const target = auditTargetOf(this.reflector, context);
    if (!target || !(error instanceof AppError)) return;
    this.audit.record({
      request,
      principal: request.principal,
      apiKeyId,
      action: auditAction(request.method, request.routeOptions?.url),
      resourceType: target.resource,
      resourceId: auditResourceId(request, target),
      status: error.status,
      errorCode: error.code,
    });
  }
}
