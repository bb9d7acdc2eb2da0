import type { ConfigNode, GatewayConfig } from './config.types';
import type { ConfigVersionEntity } from './entities/config-version.entity';
import type { ConfigEntity } from './entities/config.entity';

/** Credential fields that are secrets: shown masked, never whole, once stored. */
export const SECRET_FIELDS = ['api_key', 'aws_secret_access_key', 'aws_session_token'] as const;
export const MASK = '****';

export function maskSecret(value: string): string {
  return value.length <= 12 ? MASK : `${value.slice(0, 4)}${MASK}${value.slice(-4)}`;
}

/** A copy of a config with every secret credential masked, at every depth. */
export function maskConfig(config: GatewayConfig): GatewayConfig {
  const walk = (node: ConfigNode): ConfigNode => {
    const copy: ConfigNode = { ...node };
    for (const field of SECRET_FIELDS) {
      const value = copy[field];
      if (typeof value === 'string') copy[field] = maskSecret(value);
    }
    if (node.targets) copy.targets = node.targets.map(walk);
    return copy;
  };
  return walk(config);
}

/** Paths of secret fields that hold a masked value (sent back from a read), which we refuse to store. */
export function maskedSecretPath(config: GatewayConfig): string | null {
  const walk = (node: ConfigNode, path: string): string | null => {
    for (const field of SECRET_FIELDS) {
      const value = node[field];
      if (typeof value === 'string' && value.includes(MASK)) return path ? `${path}.${field}` : field;
    }
    for (const [i, target] of (node.targets ?? []).entries()) {
      const found = walk(target, `${path ? `${path}.` : ''}targets[${i}]`);
      if (found) return found;
    }
    return null;
  };
  return walk(config, '');
}

function summary(config: ConfigEntity) {
  return {
    object: 'config' as const,
    id: config.id,
    name: config.name,
    slug: config.slug,
    organisation_id: config.organisation_id,
    workspace_id: config.workspace_id,
    is_default: config.is_default ? 1 : 0,
    status: config.status,
    owner_id: config.owner_id,
    updated_by: config.updated_by,
    version_id: config.version_id,
    version: config.version,
    created_at: config.created_at.toISOString(),
    last_updated_at: config.updated_at.toISOString(),
  };
}

export function toConfigListItem(config: ConfigEntity) {
  return summary(config);
}

export function toConfigResponse(config: ConfigEntity) {
  return { ...summary(config), config: maskConfig(config.config) };
}

/** A version as the reference lists it: `id` is the config's, `config` is serialised JSON. */
export function toConfigVersionResponse(config: ConfigEntity, version: ConfigVersionEntity) {
  return {
    object: 'config' as const,
    id: config.id,
    version_id: version.id,
    version: version.version,
    name: version.name,
    slug: config.slug,
    organisation_id: version.organisation_id,
    workspace_id: version.workspace_id,
    is_default: version.is_default ? 1 : 0,
    status: version.status,
    owner_id: config.owner_id,
    updated_by: version.created_by,
    created_at: version.created_at.toISOString(),
    last_updated_at: version.created_at.toISOString(),
    config: JSON.stringify(maskConfig(version.config)),
    format: 'json' as const,
    type: 'ORG_CONFIG' as const,
  };
}
