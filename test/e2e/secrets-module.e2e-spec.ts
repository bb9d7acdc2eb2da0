/** The secrets engine as the app wires it: one SecretResolver and one SecretCipher for every area. */
import { SecretCipher, SecretResolver } from '../../libs/secrets/src';
import { VaultMock, startVaultMock } from '../mocks/vault-mock';
import { TEST_ENCRYPTION_KEY, TestApp, describeE2E, startTestApp } from '../support/test-app';

describeE2E('secrets module', () => {
  let app: TestApp;
  let vault: VaultMock;

  beforeAll(async () => {
    vault = await startVaultMock({ tokens: ['hvs.module-test'] });
    vault.put('gateway/openai', { api_key: 'sk-from-vault' });
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
    await vault?.close();
  });

  it('provides the cipher under GATEWAY_ENCRYPTION_KEY and a resolver that reads through the managers', async () => {
    const cipher = app.app.get(SecretCipher);
    expect(cipher.currentKeyId).toBe(new SecretCipher(TEST_ENCRYPTION_KEY).currentKeyId);
    const resolver = app.app.get(SecretResolver);
    const reference = {
      id: 'sr-module',
      name: 'module',
      managerType: 'hashicorp_vault' as const,
      authConfig: { vault_auth_type: 'token', vault_addr: vault.url, vault_token: 'hvs.module-test' },
      path: 'gateway/openai',
      key: 'api_key',
    };
    await expect(resolver.resolve(reference)).resolves.toBe('sk-from-vault');
    await expect(resolver.resolve(reference)).resolves.toBe('sk-from-vault');
    expect(vault.reads).toBe(1);
  });
});
