import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Observable, catchError, tap, throwError } from 'rxjs';
import { ACCESS_METADATA, AccessRule, AuditTarget } from '@switchboard/access';
import { toAppError } from '@switchboard/common';
import { AuditService } from './audit.service';

const ACTION_BY_METHOD: Record<string, string> = {
  POST: 'create',
  PUT: 'update',
  PATCH: 'update',
  DELETE: 'delete',
};

/** The action name: `create`, `update`, `delete`, or the last static path segment (`rotate`, `resend`). */
export function auditAction(method: string, routePattern: string | undefined): string {
  const last = (routePattern ?? '').split('/').filter(Boolean).pop() ?? '';
  if (method === 'POST' && last && !last.startsWith(':')) {
    const isCollection = !/rotate|resend|reset|cancel|start|accept/.test(last);
    if (!isCollection) return last;
  }
  return ACTION_BY_METHOD[method] ?? method.toLowerCase();
}

export function auditTargetOf(reflector: Reflector, context: ExecutionContext): AuditTarget | null {
  const rule = reflector.getAllAndOverride<AccessRule | undefined>(ACCESS_METADATA, [
    context.getHandler(),
    context.getClass(),
  ]);
  return rule && !rule.public && rule.audit ? rule.audit : null;
}

export function auditResourceId(
  request: FastifyRequest,
  target: AuditTarget,
  result?: unknown,
): string | null {
  const params = (request.params ?? {}) as Record<string, string>;
  const fromParams = target.idParam ? params[target.idParam] : undefined;
  if (fromParams) return fromParams;
  const id = (result as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' ? id : null;
}

/** Records every administrative action the handler ran, whether it succeeded or failed. */
@Injectable()
export class AuditInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly audit: AuditService,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const target = auditTargetOf(this.reflector, context);
    if (!target) return next.handle();
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    const action = auditAction(request.method, request.routeOptions?.url);
    return next.handle().pipe(
      tap((result) => {
        this.audit.record({
          request,
          principal: request.principal,
          action,
          resourceType: target.resource,
          resourceId: auditResourceId(request, target, result),
          status: reply.statusCode,
          errorCode: null,
        });
      }),
      catchError((error: unknown) => {
        const appError = toAppError(error, request);
        this.audit.record({
          request,
          principal: request.principal,
          action,
          resourceType: target.resource,
          resourceId: auditResourceId(request, target),
          status: appError.status,
          errorCode: appError.code,
        });
        return throwError(() => error);
      }),
    );
  }
}
