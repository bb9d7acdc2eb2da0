import { SetMetadata, createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
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

/** The route needs an authenticated principal holding `permission`. Declares only; the global guard decides. */
export const Authenticated = (options: { permission: Permission | null; audit?: AuditTarget }) =>
  SetMetadata(ACCESS_METADATA, { public: false, ...options } satisfies AccessRule);

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
