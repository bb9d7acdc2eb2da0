import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { ACCESS_METADATA, AccessRule } from '@switchboard/access';
import { AuditService, auditAction, auditResourceId, auditTargetOf } from '@switchboard/audit';
import { AppError } from '@switchboard/common';
import { AuthErrors } from './auth.errors';
import { AuthenticationService } from './authentication.service';

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

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const rule = this.ruleOf(context);
    if (rule?.public) return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    let failedKeyId: string | null = null;
    try {
      if (!rule) throw AuthErrors.routeNotExposed();
      const header = request.headers[API_KEY_HEADER];
      const raw = Array.isArray(header) ? header[0] : header;
      if (!raw) throw AuthErrors.missingKey();
      request.principal = await this.authentication.authenticate(raw, (_code, apiKeyId) => {
        failedKeyId = apiKeyId;
      });
      if (rule.permission && !request.principal.permissions.has(rule.permission)) {
        throw AuthErrors.missingPermission(rule.permission);
      }
      return true;
    } catch (error) {
      const target = auditTargetOf(this.reflector, context);
      if (target && error instanceof AppError) {
        this.audit.record({
          request,
          principal: request.principal,
          apiKeyId: failedKeyId,
          action: auditAction(request.method, request.routeOptions?.url),
          resourceType: target.resource,
          resourceId: auditResourceId(request, target),
          status: error.status,
          errorCode: error.code,
        });
      }
      throw error;
    }
  }
}
