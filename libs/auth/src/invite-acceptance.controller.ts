import { Body, Controller, HttpCode, Injectable, Post } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { ApiTags } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { Public } from '@switchboard/access';
import { ApiKeysService } from '@switchboard/api-keys';
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
      return {
        object: 'invite-acceptance' as const,
        user: {
          id: consumed.user.id,
          email: consumed.user.email,
          role: consumed.user.role,
          workspaces: consumed.workspaces,
        },
        api_keys: keys.map((key) => ({ object: 'api-key' as const, ...key })),
      };
    });
  }
}

@ApiTags('User invites')
@Controller('invites')
export class InviteAcceptanceController {
  constructor(private readonly acceptance: InviteAcceptanceService) {}

  @Post('accept')
  @HttpCode(200)
  @Public()
  accept(@Body() dto: AcceptInviteDto) {
    return this.acceptance.accept(dto);
  }
}
