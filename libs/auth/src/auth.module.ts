import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ApiKeysModule } from '@switchboard/api-keys';
import { AuditModule } from '@switchboard/audit';
import { IdentityModule } from '@switchboard/identity';
import { AccessGuard } from './access.guard';
import { AuthenticationService } from './authentication.service';
import { InviteAcceptanceController, InviteAcceptanceService } from './invite-acceptance.controller';

@Module({
  imports: [ApiKeysModule, IdentityModule, AuditModule],
  controllers: [InviteAcceptanceController],
  providers: [AuthenticationService, InviteAcceptanceService, { provide: APP_GUARD, useClass: AccessGuard }],
  exports: [AuthenticationService],
})
export class AuthModule {}
