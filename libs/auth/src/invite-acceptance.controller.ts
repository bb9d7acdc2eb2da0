import { Body, Controller, HttpCode, Injectable, Post, Req } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { DataSource } from 'typeorm';
import { Public } from '@switchboard/access';
import { ApiKeysService } from '@switchboard/api-keys';
import { AuditService } from '@switchboard/audit';
import { AcceptInviteDto, InvitesService } from '@switchboard/identity';

/**
 * Accepting an invite signs a person up: the user and memberships are created and their first
 * keys are issued in one transaction, so a failure leaves the invite pending and nothing behind.
 */
@Injectable()
export class InviteAcceptanceService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly invites: InvitesService,
    private readonly apiKeys: ApiKeysService,
  ) {}

  accept(dto: AcceptInviteDto) {
    return this.dataSource.transaction(async (manager) => {
      const consumed = await this.invites.consume(manager, dto.token, dto);
      const keys = await this.apiKeys.createOnboardingKeys(
        manager,
        consumed.user.organisation_id,
        consumed.user.id,
        consumed.workspaces,
        consumed.scopes,
        consumed.user.role,
      );
      const response = {
        object: 'invite-acceptance' as const,
        user: {
          id: consumed.user.id,
          email: consumed.user.email,
          role: consumed.user.role,
          workspaces: consumed.workspaces,
        },
        api_keys: keys.map((key) => ({ object: 'api-key' as const, ...key })),
      };
      return { response, inviteId: consumed.inviteId, organisationId: consumed.user.organisation_id };
    });
  }
}

@ApiTags('User invites')
@Controller('invites')
export class InviteAcceptanceController {
  constructor(
    private readonly acceptance: InviteAcceptanceService,
    private readonly audit: AuditService,
  ) {}

  /**
   * Public, so the audit interceptor (which needs a principal) does not see it: a successful
   * acceptance is recorded here, as the new user, in their organisation. A refused token has no
   * organisation to file it under and is answered only.
   */
  @Post('accept')
  @HttpCode(200)
  @Public()
  async accept(@Body() dto: AcceptInviteDto, @Req() request: FastifyRequest) {
    const accepted = await this.acceptance.accept(dto);
    this.audit.record({
      request,
      principal: undefined,
      actor: { organisationId: accepted.organisationId, userId: accepted.response.user.id },
      action: 'accept',
      resourceType: 'invite',
      resourceId: accepted.inviteId,
      status: 200,
      errorCode: null,
    });
    return accepted.response;
  }
}
