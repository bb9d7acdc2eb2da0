import type { ValueTransformer } from 'typeorm';
import { SecretCipher, atRestCipher } from '@switchboard/secrets';
import type { ConfigNode, GatewayConfig } from './config.types';
import { SECRET_FIELDS } from './configs.mapper';

/** A copy of a config with `change` applied to every secret credential, at every depth. */
function mapSecrets(config: GatewayConfig, change: (value: string) => string): GatewayConfig {
  const walk = (node: ConfigNode): ConfigNode => {
    const copy: ConfigNode = { ...node };
    for (const field of SECRET_FIELDS) {
      const value = copy[field];
      if (typeof value === 'string') copy[field] = change(value);
    }
    if (node.targets) copy.targets = node.targets.map(walk);
    return copy;
  };
  return walk(config);
}

/**
 * Stored configs keep inline credentials sealed (AES-256-GCM, libs/secrets): sealed on the way to
 * the database, opened on the way back, so the rest of the lib only ever sees plain configs.
 * Values stored before sealing existed are read as they are and sealed at their next write.
 */
export const sealedConfigTransformer: ValueTransformer = {
  to: (value: GatewayConfig | null | undefined) =>
    value && typeof value === 'object'
      ? mapSecrets(value, (secret) =>
          SecretCipher.isEncrypted(secret) ? secret : atRestCipher().encrypt(secret),
        )
      : value,
  from: (value: GatewayConfig | null | undefined) =>
    value && typeof value === 'object'
      ? mapSecrets(value, (secret) =>
          SecretCipher.isEncrypted(secret) ? atRestCipher().decrypt(secret) : secret,
        )
      : value,
};
