import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Principal } from '@switchboard/common';
import { WorkspacesService } from '@switchboard/identity';
import { getModelPricing, resolvePricing, type ModelPricing } from './catalog';
import { IntegrationModelEntity } from './entities/integration-model.entity';
import { IntegrationEntity } from './entities/integration.entity';
import { ProviderEntity } from './entities/provider.entity';
import { PricingQueryDto } from './dto/secret-reference.dto';
import { findVisibleIntegration } from './integration-access';
import { IntegrationErrors } from './integrations.errors';
import { adjustmentsToOverride, pricingConfigToOverride, toPricingResponse } from './pricing-overrides';
import { canonicalProvider } from './provider-settings';

/**
 * `GET /model-configs/pricing/{provider}/{model}`: the shipped catalog's price, or, when the
 * caller names an integration (`?integration=`) or a workspace provider (`?provider_slug=`), the
 * price that integration applies: a model's own `pricing_config`, else the catalog price with the
 * integration's `pricing_adjustments`.
 */
@Injectable()
export class ModelPricingService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly workspaces: WorkspacesService,
  ) {}

  async get(principal: Principal, provider: string, model: string, query: PricingQueryDto) {
    if (query.integration && query.provider_slug) {
      throw IntegrationErrors.invalidField(
        'provider_slug',
        'cannot be combined with integration',
        'mutuallyExclusive',
      );
    }
    let integration: IntegrationEntity | null = null;
    if (query.integration) {
      integration = await findVisibleIntegration(this.dataSource.manager, principal, query.integration);
    } else if (query.provider_slug) {
      integration = await this.integrationOfProvider(principal, query.provider_slug, query.workspace_id);
    }
    let pricing: ModelPricing | null;
    if (integration) {
      if (canonicalProvider(provider, 'provider') !== integration.ai_provider_id) {
        throw IntegrationErrors.invalidField(
          'provider',
          `'${provider}' is not the provider of integration '${integration.slug}' (${integration.ai_provider_id})`,
          'equals',
        );
      }
      const setting = await this.dataSource
        .getRepository(IntegrationModelEntity)
        .findOne({ where: { integration_id: integration.id, slug: model } });
      const custom = pricingConfigToOverride(setting?.pricing_config);
      pricing = custom
        ? resolvePricing(null, custom, { provider: integration.ai_provider_id, model })
        : resolvePricing(
            getModelPricing(provider, model),
            adjustmentsToOverride(integration.pricing_adjustments),
          );
    } else {
      pricing = getModelPricing(provider, model);
    }
    if (!pricing) throw IntegrationErrors.modelNotFound(provider, model);
    return toPricingResponse(pricing);
  }

  /** The integration behind a workspace provider, or null for a virtual key with its own key. */
  private async integrationOfProvider(
    principal: Principal,
    slug: string,
    workspaceRef: string | undefined,
  ): Promise<IntegrationEntity | null> {
    const reference = workspaceRef ?? principal.workspaceId;
    if (!reference) throw IntegrationErrors.workspaceRequired();
    const workspace = await this.workspaces.findVisible(principal, reference);
    const row = await this.dataSource
      .getRepository(ProviderEntity)
      .findOne({ where: { organisation_id: principal.organisationId, workspace_id: workspace.id, slug } });
    if (!row) throw IntegrationErrors.providerNotFound(slug, 'provider_slug');
    if (!row.integration_id) return null;
    return this.dataSource.getRepository(IntegrationEntity).findOne({ where: { id: row.integration_id } });
  }
}
