import { ProviderDirectory, ModelDirectory } from '../../libs/integrations/src';
import type { DirectoryLookup } from '../../libs/integrations/src';
import {
  TestApp,
  TestDatabase,
  createTestDatabase,
  describeE2EWithRedis,
  startTestApp,
} from '../support/test-app';

/**
 * Two replicas on one database and one Redis: a write on one reaches the other's provider index
 * through the InvalidationBus, so the other never serves a deleted or changed provider for long.
 */

async function eventually<T>(read: () => T, accept: (value: T) => boolean, timeoutMs = 5000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = read();
    if (accept(value)) return value;
    if (Date.now() - started > timeoutMs) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describeE2EWithRedis(
  'provider index across replicas',
  () => {
    let database: TestDatabase;
    let a: TestApp;
    let b: TestApp;
    let workspaceId: string;

    beforeAll(async () => {
      database = await createTestDatabase();
      a = await startTestApp({}, database);
      b = await startTestApp({}, database);
      workspaceId = (await a.request('GET', '/v1/admin/workspaces/default')).body.id;
    });

    afterAll(async () => {
      await a?.close();
      await b?.close();
      await database?.drop();
    });

    it('a provider made, changed and deleted on one replica is seen so on the other', async () => {
      const directory = b.app.get(ProviderDirectory);
      const models = b.app.get(ModelDirectory);
      const created = await a.request('POST', '/v1/integrations', {
        body: {
          name: 'Replicated',
          slug: 'replicated',
          ai_provider_id: 'openai',
          key: 'sk-replica-key-0000000000000001',
        },
      });
      expect(created.status).toBe(200);
      await a.request('PUT', '/v1/integrations/replicated/workspaces', {
        body: { workspaces: [{ id: 'default', enabled: true }] },
      });
      const seen = await eventually(
        () => directory.lookupProviderSlug(workspaceId, 'replicated') as DirectoryLookup,
        (lookup) => lookup !== null,
      );
      expect(seen).toMatchObject({
        refused: false,
        credentials: { apiKey: 'sk-replica-key-0000000000000001' },
      });
      expect(models.findForWorkspace(workspaceId, 'gpt-4o')).not.toBeNull();

      await a.request('PUT', '/v1/integrations/replicated', {
        body: { key: 'sk-replica-key-0000000000000002' },
      });
      const rotated = await eventually(
        () => directory.lookupProviderSlug(workspaceId, 'replicated') as DirectoryLookup,
        (lookup) =>
          !!lookup && !lookup.refused && lookup.credentials.apiKey === 'sk-replica-key-0000000000000002',
      );
      expect(rotated).toMatchObject({ credentials: { apiKey: 'sk-replica-key-0000000000000002' } });

      await a.request('PUT', '/v1/integrations/replicated/models', {
        body: { allow_all_models: false, models: [{ slug: 'gpt-4o-mini', enabled: true }] },
      });
      await eventually(
        () => models.findForWorkspace(workspaceId, 'gpt-4o'),
        (model) => model === null,
      );
      expect(models.findForWorkspace(workspaceId, 'gpt-4o')).toBeNull();
      expect(models.findForWorkspace(workspaceId, 'gpt-4o-mini')).not.toBeNull();

      await a.request('DELETE', '/v1/providers/replicated?workspace_id=default');
      const gone = await eventually(
        () => directory.lookupProviderSlug(workspaceId, 'replicated') as DirectoryLookup,
        (lookup) => lookup === null,
      );
      expect(gone).toBeNull();
    });
  },
  'replicas cannot share invalidations',
);
