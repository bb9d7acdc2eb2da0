import { Controller, Get } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Public } from '@switchboard/access';
import { AppError } from '@switchboard/common';

@ApiTags('Health')
@Controller('health')
export class HealthController {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Liveness: the process answers. */
  @Get()
  @Public()
  live() {
    return { status: 'ok' };
  }

  /** Readiness: the database answers too. */
  @Get('ready')
  @Public()
  async ready() {
    try {
      await this.dataSource.query('SELECT 1');
      return { status: 'ok', database: 'up' };
    } catch {
      throw new AppError(503, 'not_ready', 'The database is not reachable', null, 'server_error');
    }
  }
}
