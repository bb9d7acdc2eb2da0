import { Body, Controller, Get, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { Authenticated, CurrentPrincipal } from '@switchboard/access';
import type { Principal } from '@switchboard/common';
import { ListLogsQueryDto } from './dto/log.dto';
import { LogsService } from './logs.service';

@ApiTags('Logs')
@Controller('logs')
export class LogsController {
  constructor(private readonly logs: LogsService) {}

  /** One log object or an array of them; validated per item in the service (the pipe cannot type a oneOf). */
  @Post()
  @HttpCode(200)
  @Authenticated({ permission: 'logs.write', audit: { resource: 'log' } })
  insert(@CurrentPrincipal() principal: Principal, @Req() request: FastifyRequest, @Body() body: unknown) {
    return this.logs.insertCustom(
      principal,
      { requestId: String(request.id), traceId: request.traceId },
      body,
    );
  }

  @Get()
  @Authenticated({ permission: 'logs.list' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListLogsQueryDto) {
    return this.logs.list(principal, query);
  }

  @Get(':logId')
  @Authenticated({ permission: 'logs.view' })
  get(@CurrentPrincipal() principal: Principal, @Param('logId') logId: string) {
    return this.logs.get(principal, logId);
  }
}
