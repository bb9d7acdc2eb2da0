import { randomUUID } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { Principal, isUuid, slugify } from '@switchboard/common';
import { insertable } from '@switchboard/database';
import { IntegrationWorkspaceEntity } from './entities/integration-workspace.entity';
import { IntegrationEntity } from './entities/integration.entity';
import { ProviderEntity } from './entities/provider.entity';
import { IntegrationErrors } from './integrations.errors';

/** An integration of the caller's organisation by id or slug, whoever may see it. */
export async function findIntegration(
  manager: EntityManager,
  organisationId: string,
  idOrSlug: string,
): Promise<IntegrationEntity | null> {
  const where = isUuid(idOrSlug)
    ? [
        { organisation_id: organisationId, id: idOrSlug },
        { organisation_id: organisationId, slug: idOrSlug },
      ]
    : [{ organisation_id: organisationId, slug: idOrSlug }];
  return manager.getRepository(IntegrationEntity).findOne({ where });
}

/**
 * Whether a workspace may use an integration: a workspace-scoped one in its own workspace; an
 * organisation one through its workspace row, or, without a row, through global access.
 */
export function grantedTo(
  integration: IntegrationEntity,
  workspaceId: string,
  grant: IntegrationWorkspaceEntity | null | undefined,
): boolean {
  if (integration.workspace_id) return integration.workspace_id === workspaceId;
  if (grant) return grant.enabled;
  return integration.global_workspace_access?.enabled ?? false;
}

export async function isGranted(
  manager: EntityManager,
  integration: IntegrationEntity,
  workspaceId: string,
): Promise<boolean> {
  if (integration.workspace_id) return integration.workspace_id === workspaceId;
  const grant = await manager
    .getRepository(IntegrationWorkspaceEntity)
    .findOne({ where: { integration_id: integration.id, workspace_id: workspaceId } });
  return grantedTo(integration, workspaceId, grant);
}

/**
 * The integration as `principal` may see it: organisation-wide principals see all; a workspace
 * principal only those its workspace may use (anything else is the same 404 as a missing one).
 */
export async function findVisibleIntegration(
  manager: EntityManager,
  principal: Principal,
  idOrSlug: string,
): Promise<IntegrationEntity> {
  const integration = await findIntegration(manager, principal.organisationId, idOrSlug);
  if (!integration) throw IntegrationErrors.integrationNotFound(idOrSlug);
  if (!principal.organisationWide && !(await isGranted(manager, integration, principal.workspaceId ?? ''))) {
    throw IntegrationErrors.integrationNotFound(idOrSlug);
  }
  return integration;
}

export async function providerSlugTaken(
  manager: EntityManager,
  workspaceId: string,
  slug: string,
): Promise<boolean> {
  return manager.getRepository(ProviderEntity).exists({ where: { workspace_id: workspaceId, slug } });
}

/** A free slug in the workspace, from `base`; `base` itself when free. */
export async function uniqueProviderSlug(
  manager: EntityManager,
  workspaceId: string,
  base: string,
): Promise<string> {
  const root = slugify(base);
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const candidate = attempt === 0 ? root : `${root}-${randomUUID().slice(0, 6)}`;
    if (!(await providerSlugTaken(manager, workspaceId, candidate))) return candidate;
  }
  return `${root}-${randomUUID()}`;
}

/**
 * The provider an integration grant makes in a workspace (`create_default_provider`). An
 * explicit slug that is taken is refused; the integration's own slug is made unique instead. A
 * workspace that already has the integration's default provider keeps it.
 */
export async function createDefaultProvider(
  manager: EntityManager,
  principal: Principal,
  integration: IntegrationEntity,
  workspaceId: string,
  explicitSlug: string | undefined,
  param: string,
): Promise<ProviderEntity> {
  const repository = manager.getRepository(ProviderEntity);
  const existing = await repository.findOne({
    where: { workspace_id: workspaceId, integration_id: integration.id, is_default: true },
  });
  if (existing) return existing;
  let slug: string;
  if (explicitSlug) {
    if (await providerSlugTaken(manager, workspaceId, explicitSlug)) {
      throw IntegrationErrors.providerSlugTaken(explicitSlug, param);
    }
    slug = explicitSlug;
  } else {
    slug = await uniqueProviderSlug(manager, workspaceId, integration.slug);
  }
  const provider = repository.create({
    id: randomUUID(),
    organisation_id: integration.organisation_id,
    workspace_id: workspaceId,
    integration_id: integration.id,
    kind: 'provider',
    slug,
    name: integration.name,
    note: null,
    ai_provider_id: integration.ai_provider_id,
    key_encrypted: null,
    key_mask: null,
    configurations: {},
    secret_configurations: null,
    secret_mappings: [],
    tags: {},
    usage_limits: null,
    rate_limits: null,
    expires_at: null,
    status: 'active',
    is_default: true,
    created_by_user_id: principal.user?.id ?? null,
    created_by_key_id: principal.apiKey?.id ?? null,
  });
  await repository.insert(insertable(provider));
  return provider;
}
