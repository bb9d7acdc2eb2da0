import { Controller, Get, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '@switchboard/access';
import type { Principal } from '@switchboard/common';
import { AuditService } from './audit.service';
import { ListAuditLogsQueryDto } from './dto/audit-log.dto';

@ApiTags('Audit logs')
@Controller('audit-logs')
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  @Authenticated({ permission: 'audit_logs.list' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListAuditLogsQueryDto) {
    return this.audit.list(principal, query);
  }
}
