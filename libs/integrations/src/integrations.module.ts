import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdentityModule } from '@switchboard/identity';
import { IntegrationModelEntity } from './entities/integration-model.entity';
import { IntegrationWorkspaceEntity } from './entities/integration-workspace.entity';
import { IntegrationEntity } from './entities/integration.entity';
import { ProviderEntity } from './entities/provider.entity';
import { SecretReferenceEntity } from './entities/secret-reference.entity';
import {
  IntegrationsController,
  ModelPricingController,
  ProvidersController,
  SecretReferencesController,
  VirtualKeysController,
} from './integrations.controller';
import { IntegrationsService } from './integrations.service';
import { ModelDirectory } from './model-directory';
import { ModelPricingService } from './model-pricing.service';
import { ProviderDirectory } from './provider-directory';
import { ProviderTokens } from './provider-tokens';
import { ProvidersService } from './providers.service';
import { SecretReferencesService } from './secret-references.service';

/** Integrations, workspace providers, virtual keys, secret references and model pricing. */
@Module({
  imports: [
    TypeOrmModule.forFeature([
      IntegrationEntity,
      IntegrationWorkspaceEntity,
      IntegrationModelEntity,
      ProviderEntity,
      SecretReferenceEntity,
    ]),
    IdentityModule,
  ],
  controllers: [
    IntegrationsController,
    ProvidersController,
    VirtualKeysController,
    SecretReferencesController,
    ModelPricingController,
  ],
  providers: [
    IntegrationsService,
    ProvidersService,
    SecretReferencesService,
    ModelPricingService,
    ProviderDirectory,
    ModelDirectory,
    ProviderTokens,
  ],
  exports: [ProviderDirectory, ModelDirectory, ProviderTokens],
})
export class IntegrationsModule {}
