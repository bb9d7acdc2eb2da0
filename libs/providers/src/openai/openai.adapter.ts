import type { ProviderCredentials } from '../types';
import { ALL_OPENAI_ROUTES } from '../shared/http';
import { createOpenAiCompatibleAdapter } from '../openai-compatible/openai-compatible.adapter';

export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

function organisationHeaders(credentials: ProviderCredentials): Record<string, string> {
  const headers: Record<string, string> = {};
  if (credentials.openaiOrganization) headers['openai-organization'] = credentials.openaiOrganization;
  if (credentials.openaiProject) headers['openai-project'] = credentials.openaiProject;
  return headers;
}

/** OpenAI itself: every route is native; multipart uploads and the proxy route pass through. */
export const openAiAdapter = createOpenAiCompatibleAdapter({
  id: 'openai',
  displayName: 'OpenAI',
  baseUrl: OPENAI_BASE_URL,
  routes: [...ALL_OPENAI_ROUTES],
  extraHeaders: organisationHeaders,
});
