import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '@switchboard/access';
import type { Principal } from '@switchboard/common';
import { CreateApiKeyDto, ListApiKeysQueryDto, RotateApiKeyDto, UpdateApiKeyDto } from './dto/api-key.dto';
import { ApiKeysService } from './api-keys.service';

@ApiTags('API keys')
@Controller('api-keys')
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @Post(':type/:subType')
  @HttpCode(200)
  @Authenticated({ permission: 'api_keys.create', audit: { resource: 'api_key' } })
  create(
    @CurrentPrincipal() principal: Principal,
    @Param('type') type: string,
    @Param('subType') subType: string,
    @Body() dto: CreateApiKeyDto,
  ) {
    return this.apiKeys.create(principal, type, subType, dto);
  }

  @Get()
  @Authenticated({ permission: 'api_keys.list' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListApiKeysQueryDto) {
    return this.apiKeys.list(principal, query);
  }

  @Get(':id')
  @Authenticated({ permission: 'api_keys.read' })
  get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.apiKeys.get(principal, id);
  }

  @Put(':id')
  @Authenticated({ permission: 'api_keys.update', audit: { resource: 'api_key', idParam: 'id' } })
  update(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() dto: UpdateApiKeyDto) {
    return this.apiKeys.update(principal, id, dto);
  }

  @Delete(':id')
  @Authenticated({ permission: 'api_keys.delete', audit: { resource: 'api_key', idParam: 'id' } })
  remove(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.apiKeys.remove(principal, id);
  }

  @Post(':id/rotate')
  @HttpCode(200)
  @Authenticated({ permission: 'api_keys.rotate', audit: { resource: 'api_key', idParam: 'id' } })
  rotate(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() dto: RotateApiKeyDto) {
    return this.apiKeys.rotate(principal, id, dto);
  }
}
