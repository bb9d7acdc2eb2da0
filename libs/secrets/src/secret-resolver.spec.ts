import { AppError } from '@switchboard/common';
import { SecretLocation, SecretManagerClient, SecretManagerError } from './managers/secret-manager.types';
import { SecretReferenceTarget, SecretResolver } from './secret-resolver';

function fakeClients(
  answer: (location: SecretLocation, config: Record<string, unknown>) => Promise<string> | string,
) {
  const built: Record<string, unknown>[] = [];
  const reads: SecretLocation[] = [];
  const factory = (_type: unknown, config: Record<string, unknown>): SecretManagerClient => {
    built.push(config);
    return {
      managerType: 'hashicorp_vault',
      target: String(config.vault_addr),
      read: async (location) => {
        reads.push(location);
        return answer(location, config);
      },
    };
  };
  return { built, reads, factory };
}

const reference: SecretReferenceTarget = {
  id: '7d3c0d4e-5b8e-4c55-9d5e-3f0b7f6f2a10',
  name: 'openai-prod',
  managerType: 'hashicorp_vault',
  authConfig: { vault_auth_type: 'token', vault_addr: 'https://vault.internal', vault_token: 'hvs.x' },
  path: 'llm/openai',
  key: 'api_key',
};

describe('SecretResolver', () => {
  it('keeps one client per auth config and one cached value per key', async () => {
    const fake = fakeClients((location) => `value-of-${location.key}`);
    const resolver = new SecretResolver({ clientFactory: fake.factory });
    await expect(resolver.resolve(reference)).resolves.toBe('value-of-api_key');
    await expect(resolver.resolve(reference, { key: 'org' })).resolves.toBe('value-of-org');
    await expect(resolver.resolve({ ...reference, name: 'renamed' })).resolves.toBe('value-of-api_key');
    expect(fake.reads).toHaveLength(2);
    expect(fake.built).toHaveLength(1);
    expect(resolver.peek(reference.id)).toBe('value-of-api_key');
    expect(resolver.peek(reference.id, 'org')).toBe('value-of-org');
    await resolver.resolve({ ...reference, authConfig: { ...reference.authConfig, vault_token: 'hvs.y' } });
    expect(fake.built).toHaveLength(2);
    expect(fake.reads).toHaveLength(3);
    await resolver.resolve(reference, { forceRefresh: true });
    expect(fake.reads).toHaveLength(4);
  });

  it('a configuration the client refuses is a 502 naming the reference', async () => {
    const resolver = new SecretResolver({
      clientFactory: () => {
        throw new SecretManagerError('invalid_config', 'aws_region is not set in the auth config');
      },
    });
    const error = await resolver.resolve(reference).catch((e: AppError) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).status).toBe(502);
    expect((error as AppError).message).toBe(
      `Secret reference 'openai-prod' (${reference.id}) could not be read from HashiCorp Vault: aws_region is not set in the auth config`,
    );
  });

  it('an unexpected failure is not leaked: a generic reason, still naming the reference', async () => {
    const fake = fakeClients(() => {
      throw new TypeError('Cannot read properties of undefined (reading hvs.x)');
    });
    const resolver = new SecretResolver({ clientFactory: fake.factory });
    const error = (await resolver.resolve(reference).catch((e: AppError) => e)) as AppError;
    expect(error.code).toBe('secret_reference_unavailable');
    expect(error.message).toContain('unexpected error in the gateway');
    expect(error.message).not.toContain('hvs.x');
  });

  it('invalidate drops only that reference', async () => {
    const fake = fakeClients(() => 'v');
    const resolver = new SecretResolver({ clientFactory: fake.factory });
    await resolver.resolve(reference);
    await resolver.resolve({ ...reference, id: 'other' });
    resolver.invalidate(reference.id);
    expect(resolver.peek(reference.id)).toBeUndefined();
    expect(resolver.peek('other')).toBe('v');
    expect(resolver.size).toBe(1);
  });
});
