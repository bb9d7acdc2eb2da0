import { makeContext } from '../testing/context';
import { ProviderRequestError } from '../shared/errors';
import { azureOpenAiAdapter } from './azure-openai.adapter';

const body = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] };

describe('azure-openai adapter', () => {
  it('calls the deployment URL with the api-key header and the default api-version', async () => {
    const request = await azureOpenAiAdapter.buildRequest(
      makeContext({
        body,
        credentials: { apiKey: 'az-key', azureResourceName: 'contoso', azureDeploymentId: 'gpt4o-prod' },
      }),
    );
    expect(request).toEqual({
      method: 'POST',
      url: 'https://contoso.openai.azure.com/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21',
      headers: { 'api-key': 'az-key', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  });

  it('uses the Entra ID token as a bearer token, and the given api-version', async () => {
    const request = await azureOpenAiAdapter.buildRequest(
      makeContext({
        route: 'embeddings',
        path: '/embeddings',
        body: { model: 'text-embedding-3-small', input: 'x' },
        credentials: {
          apiKey: 'ignored-when-entra',
          azureEntraToken: 'eyJ0',
          azureResourceName: 'contoso',
          azureApiVersion: '2025-04-01-preview',
        },
      }),
    );
    expect(request.url).toBe(
      'https://contoso.openai.azure.com/openai/deployments/text-embedding-3-small/embeddings?api-version=2025-04-01-preview',
    );
    expect(request.headers).toEqual({ authorization: 'Bearer eyJ0', 'content-type': 'application/json' });
  });

  it('sends resource-level routes under /openai and keeps an existing query string', async () => {
    const credentials = { apiKey: 'k', azureResourceName: 'contoso' };
    const models = await azureOpenAiAdapter.buildRequest(
      makeContext({ route: 'models.list', method: 'GET', path: '/models', credentials }),
    );
    expect(models.url).toBe('https://contoso.openai.azure.com/openai/models?api-version=2024-10-21');
    const files = await azureOpenAiAdapter.buildRequest(
      makeContext({ route: 'openai.proxy', method: 'GET', path: '/files?purpose=batch', credentials }),
    );
    expect(files.url).toBe(
      'https://contoso.openai.azure.com/openai/files?purpose=batch&api-version=2024-10-21',
    );
  });

  it('takes a custom host instead of the resource name', async () => {
    const request = await azureOpenAiAdapter.buildRequest(
      makeContext({
        body,
        credentials: { apiKey: 'k', customHost: 'https://apim.example.com/', azureDeploymentId: 'd' },
      }),
    );
    expect(request.url).toBe(
      'https://apim.example.com/openai/deployments/d/chat/completions?api-version=2024-10-21',
    );
  });

  it('refuses to build without a resource, a deployment or a credential', () => {
    expect(() =>
      azureOpenAiAdapter.buildRequest(makeContext({ body, credentials: { apiKey: 'k' } })),
    ).toThrow(ProviderRequestError);
    expect(() =>
      azureOpenAiAdapter.buildRequest(
        makeContext({ body: { messages: [] }, credentials: { apiKey: 'k', azureResourceName: 'r' } }),
      ),
    ).toThrow('deployment');
    expect(() =>
      azureOpenAiAdapter.buildRequest(makeContext({ body, credentials: { azureResourceName: 'r' } })),
    ).toThrow('API key');
    expect(() => azureOpenAiAdapter.buildRequest(makeContext({ route: 'rerank' }))).toThrow('rerank');
  });

  it('is native for its routes', () => {
    expect(azureOpenAiAdapter.isOpenAiNative('chat.completions')).toBe(true);
    expect(azureOpenAiAdapter.routes.has('messages')).toBe(false);
  });
});
