import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '@switchboard/access';
import { PageQueryDto } from '@switchboard/common';
import type { Principal } from '@switchboard/common';
import { ConfigsService } from './configs.service';
import { CreateConfigDto, ListConfigsQueryDto, UpdateConfigDto } from './dto/config.dto';

@ApiTags('Configs')
@Controller('configs')
export class ConfigsController {
  constructor(private readonly configs: ConfigsService) {}

  @Post()
  @HttpCode(200)
  @Authenticated({ permission: 'configs.create', audit: { resource: 'config' } })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateConfigDto) {
    return this.configs.create(principal, dto);
  }

  @Get()
  @Authenticated({ permission: 'configs.list' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListConfigsQueryDto) {
    return this.configs.list(principal, query);
  }

  @Get(':slug')
  @Authenticated({ permission: 'configs.read' })
  get(@CurrentPrincipal() principal: Principal, @Param('slug') slug: string) {
    return this.configs.get(principal, slug);
  }

  @Put(':slug')
  @Authenticated({ permission: 'configs.update', audit: { resource: 'config', idParam: 'slug' } })
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('slug') slug: string,
    @Body() dto: UpdateConfigDto,
  ) {
    return this.configs.update(principal, slug, dto);
  }

  @Delete(':slug')
  @Authenticated({ permission: 'configs.delete', audit: { resource: 'config', idParam: 'slug' } })
  remove(@CurrentPrincipal() principal: Principal, @Param('slug') slug: string) {
    return this.configs.remove(principal, slug);
  }

  @Get(':slug/versions')
  @Authenticated({ permission: 'configs.read' })
  versions(
    @CurrentPrincipal() principal: Principal,
    @Param('slug') slug: string,
    @Query() query: PageQueryDto,
  ) {
    return this.configs.versions(principal, slug, query);
  }
}
