import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AUDIT_INTERCEPTOR } from '@switchboard/access';
import { ApiKeysModule } from '@switchboard/api-keys';
import { AuditLogEntity } from './entities/audit-log.entity';
import { AuditController } from './audit.controller';
import { AuditInterceptor } from './audit.interceptor';
import { AuditService } from './audit.service';

/**
 * The audit trail. Its interceptor is not global: `@Authenticated({ audit })` binds it to the
 * audited routes only (through AUDIT_INTERCEPTOR), so unaudited routes, the data plane above
 * all, pay nothing for it.
 */
@Module({
  imports: [TypeOrmModule.forFeature([AuditLogEntity]), ApiKeysModule],
  controllers: [AuditController],
  providers: [AuditService, AuditInterceptor, { provide: AUDIT_INTERCEPTOR, useExisting: AuditInterceptor }],
  exports: [AuditService, AUDIT_INTERCEPTOR],
})
export class AuditModule {}
