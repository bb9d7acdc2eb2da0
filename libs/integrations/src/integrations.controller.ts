import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '@switchboard/access';
import type { Principal } from '@switchboard/common';
import {
  BulkUpdateModelsDto,
  BulkUpdateWorkspacesDto,
  CreateIntegrationDto,
  DeleteModelsQueryDto,
  ListIntegrationsQueryDto,
  UpdateIntegrationDto,
} from './dto/integration.dto';
import {
  CreateProviderDto,
  CreateVirtualKeyDto,
  ListProvidersQueryDto,
  UpdateProviderDto,
  UpdateVirtualKeyDto,
  WorkspaceQueryDto,
} from './dto/provider.dto';
import {
  CreateSecretReferenceDto,
  ListSecretReferencesQueryDto,
  PricingQueryDto,
  UpdateSecretReferenceDto,
} from './dto/secret-reference.dto';
import { IntegrationsService } from './integrations.service';
import { ModelPricingService } from './model-pricing.service';
import { ProvidersService } from './providers.service';
import { SecretReferencesService } from './secret-references.service';

@ApiTags('Integrations')
@Controller('integrations')
export class IntegrationsController {
  constructor(private readonly integrations: IntegrationsService) {}

  @Post()
  @HttpCode(200)
  @Authenticated({ permission: 'integrations.create', audit: { resource: 'integration' } })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateIntegrationDto) {
    return this.integrations.create(principal, dto);
  }

  @Get()
  @Authenticated({ permission: 'integrations.list' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListIntegrationsQueryDto) {
    return this.integrations.list(principal, query);
  }

  @Get(':slug')
  @Authenticated({ permission: 'integrations.read' })
  get(@CurrentPrincipal() principal: Principal, @Param('slug') slug: string) {
    return this.integrations.get(principal, slug);
  }

  @Put(':slug')
  @Authenticated({ permission: 'integrations.update', audit: { resource: 'integration', idParam: 'slug' } })
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('slug') slug: string,
    @Body() dto: UpdateIntegrationDto,
  ) {
    return this.integrations.update(principal, slug, dto);
  }

  @Delete(':slug')
  @Authenticated({ permission: 'integrations.delete', audit: { resource: 'integration', idParam: 'slug' } })
  remove(@CurrentPrincipal() principal: Principal, @Param('slug') slug: string) {
    return this.integrations.remove(principal, slug);
  }

  @Get(':slug/workspaces')
  @Authenticated({ permission: 'integrations.read' })
  listWorkspaces(@CurrentPrincipal() principal: Principal, @Param('slug') slug: string) {
    return this.integrations.listWorkspaces(principal, slug);
  }

  @Put(':slug/workspaces')
  @Authenticated({ permission: 'integrations.update', audit: { resource: 'integration', idParam: 'slug' } })
  updateWorkspaces(
    @CurrentPrincipal() principal: Principal,
    @Param('slug') slug: string,
    @Body() dto: BulkUpdateWorkspacesDto,
  ) {
    return this.integrations.updateWorkspaces(principal, slug, dto);
  }

  @Get(':slug/models')
  @Authenticated({ permission: 'integrations.read' })
  listModels(@CurrentPrincipal() principal: Principal, @Param('slug') slug: string) {
    return this.integrations.listModels(principal, slug);
  }

  @Put(':slug/models')
  @Authenticated({ permission: 'integrations.update', audit: { resource: 'integration', idParam: 'slug' } })
  updateModels(
    @CurrentPrincipal() principal: Principal,
    @Param('slug') slug: string,
    @Body() dto: BulkUpdateModelsDto,
  ) {
    return this.integrations.updateModels(principal, slug, dto);
  }

  @Delete(':slug/models')
  @Authenticated({ permission: 'integrations.update', audit: { resource: 'integration', idParam: 'slug' } })
  deleteModels(
    @CurrentPrincipal() principal: Principal,
    @Param('slug') slug: string,
    @Query() query: DeleteModelsQueryDto,
  ) {
    return this.integrations.deleteModels(principal, slug, query.slugs);
  }
}

@ApiTags('Providers')
@Controller('providers')
export class ProvidersController {
  constructor(private readonly providers: ProvidersService) {}

  @Post()
  @HttpCode(200)
  @Authenticated({ permission: 'providers.create', audit: { resource: 'provider' } })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateProviderDto) {
    return this.providers.createProvider(principal, dto);
  }

  @Get()
  @Authenticated({ permission: 'providers.list' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListProvidersQueryDto) {
    return this.providers.list(principal, query, 'provider');
  }

  @Get(':slug')
  @Authenticated({ permission: 'providers.read' })
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('slug') slug: string,
    @Query() query: WorkspaceQueryDto,
  ) {
    return this.providers.get(principal, slug, query.workspace_id, 'provider');
  }

  @Put(':slug')
  @Authenticated({ permission: 'providers.update', audit: { resource: 'provider', idParam: 'slug' } })
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('slug') slug: string,
    @Query() query: WorkspaceQueryDto,
    @Body() dto: UpdateProviderDto,
  ) {
    return this.providers.updateProvider(principal, slug, query.workspace_id, dto);
  }

  @Delete(':slug')
  @Authenticated({ permission: 'providers.delete', audit: { resource: 'provider', idParam: 'slug' } })
  remove(
    @CurrentPrincipal() principal: Principal,
    @Param('slug') slug: string,
    @Query() query: WorkspaceQueryDto,
  ) {
    return this.providers.remove(principal, slug, query.workspace_id, 'provider');
  }
}

@ApiTags('Virtual keys')
@Controller('virtual-keys')
export class VirtualKeysController {
  constructor(private readonly providers: ProvidersService) {}

  @Post()
  @HttpCode(200)
  @Authenticated({ permission: 'virtual_keys.create', audit: { resource: 'virtual_key' } })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateVirtualKeyDto) {
    return this.providers.createVirtualKey(principal, dto);
  }

  @Get()
  @Authenticated({ permission: 'virtual_keys.list' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListProvidersQueryDto) {
    return this.providers.list(principal, query, 'virtual_key');
  }

  @Get(':slug')
  @Authenticated({ permission: 'virtual_keys.read' })
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('slug') slug: string,
    @Query() query: WorkspaceQueryDto,
  ) {
    return this.providers.get(principal, slug, query.workspace_id, 'virtual_key');
  }

  @Put(':slug')
  @Authenticated({ permission: 'virtual_keys.update', audit: { resource: 'virtual_key', idParam: 'slug' } })
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('slug') slug: string,
    @Query() query: WorkspaceQueryDto,
    @Body() dto: UpdateVirtualKeyDto,
  ) {
    return this.providers.updateVirtualKey(principal, slug, query.workspace_id, dto);
  }

  @Delete(':slug')
  @Authenticated({ permission: 'virtual_keys.delete', audit: { resource: 'virtual_key', idParam: 'slug' } })
  remove(
    @CurrentPrincipal() principal: Principal,
    @Param('slug') slug: string,
    @Query() query: WorkspaceQueryDto,
  ) {
    return this.providers.remove(principal, slug, query.workspace_id, 'virtual_key');
  }
}

@ApiTags('Secret references')
@Controller('secret-references')
export class SecretReferencesController {
  constructor(private readonly references: SecretReferencesService) {}

  @Post()
  @HttpCode(200)
  @Authenticated({ permission: 'secret_references.create', audit: { resource: 'secret_reference' } })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateSecretReferenceDto) {
    return this.references.create(principal, dto);
  }

  @Get()
  @Authenticated({ permission: 'secret_references.list' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListSecretReferencesQueryDto) {
    return this.references.list(principal, query);
  }

  @Get(':secretReferenceId')
  @Authenticated({ permission: 'secret_references.read' })
  get(@CurrentPrincipal() principal: Principal, @Param('secretReferenceId') id: string) {
    return this.references.get(principal, id);
  }

  @Put(':secretReferenceId')
  @Authenticated({
    permission: 'secret_references.update',
    audit: { resource: 'secret_reference', idParam: 'secretReferenceId' },
  })
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('secretReferenceId') id: string,
    @Body() dto: UpdateSecretReferenceDto,
  ) {
    return this.references.update(principal, id, dto);
  }

  @Delete(':secretReferenceId')
  @Authenticated({
    permission: 'secret_references.delete',
    audit: { resource: 'secret_reference', idParam: 'secretReferenceId' },
  })
  remove(@CurrentPrincipal() principal: Principal, @Param('secretReferenceId') id: string) {
    return this.references.remove(principal, id);
  }
}

@ApiTags('Model pricing')
@Controller('model-configs/pricing')
export class ModelPricingController {
  constructor(private readonly pricing: ModelPricingService) {}

  /** `model` may hold slashes (`accounts/fireworks/models/x`, `publishers/...`): the rest of the path. */
  @Get(':provider/*')
  @Authenticated({ permission: 'model_pricing.read' })
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('provider') provider: string,
    @Param('*') model: string,
    @Query() query: PricingQueryDto,
  ) {
    return this.pricing.get(principal, provider, decodeURIComponent(model), query);
  }
}
