import { resolveTarget } from '../provider-resolution';
import {
  AZURE_REALTIME_API_VERSION,
  headersWithProtocolCredentials,
  offeredProtocols,
  realtimeUpstream,
  selectProtocol,
} from './realtime-upstream';
import { addRealtimeUsage, isSendableCloseCode } from './realtime-session';

const target = (headers: Record<string, string>) => resolveTarget(headers)!;

describe('realtime upstream', () => {
  it('OpenAI: wss://api.openai.com/v1/realtime with the query passed through and the bearer key', () => {
    const where = realtimeUpstream(
      target({ 'x-gateway-provider': 'openai', authorization: 'Bearer sk-1' }),
      new URLSearchParams('model=gpt-4o-realtime-preview&voice=alloy'),
      {},
    );
    expect(where).toEqual({
      url: 'wss://api.openai.com/v1/realtime?model=gpt-4o-realtime-preview&voice=alloy',
      headers: { authorization: 'Bearer sk-1' },
      model: 'gpt-4o-realtime-preview',
    });
  });

  it('OpenAI: a custom host keeps its scheme (http → ws), and OpenAI-Beta is forwarded as sent', () => {
    const where = realtimeUpstream(
      target({
        'x-gateway-provider': 'openai',
        authorization: 'Bearer sk-1',
        'x-gateway-custom-host': 'http://127.0.0.1:9000/v1/',
        'openai-organization': 'org-1',
      }),
      new URLSearchParams('model=m'),
      { 'openai-beta': 'realtime=v1' },
    );
    expect(where.url).toBe('ws://127.0.0.1:9000/v1/realtime?model=m');
    expect(where.headers).toEqual({
      authorization: 'Bearer sk-1',
      'openai-beta': 'realtime=v1',
      'openai-organization': 'org-1',
    });
  });

  it('Azure: /openai/realtime with api-version and deployment, api-key or an Entra token', () => {
    const withKey = realtimeUpstream(
      target({
        'x-gateway-provider': 'azure-openai',
        authorization: 'Bearer azure-key',
        'x-gateway-azure-resource-name': 'acme',
      }),
      new URLSearchParams('model=rt-deployment'),
      {},
    );
    expect(withKey).toEqual({
      url: `wss://acme.openai.azure.com/openai/realtime?api-version=${AZURE_REALTIME_API_VERSION}&deployment=rt-deployment`,
      headers: { 'api-key': 'azure-key' },
      model: 'rt-deployment',
    });
    const withEntra = realtimeUpstream(
      target({
        'x-gateway-provider': 'azure-openai',
        'x-gateway-azure-resource-name': 'acme',
        'x-gateway-azure-deployment-id': 'dep',
        'x-gateway-azure-entra-token': 'entra',
        'x-gateway-azure-api-version': '2025-04-01-preview',
      }),
      new URLSearchParams(),
      {},
    );
    expect(withEntra.url).toBe(
      'wss://acme.openai.azure.com/openai/realtime?api-version=2025-04-01-preview&deployment=dep',
    );
    expect(withEntra.headers).toEqual({ authorization: 'Bearer entra' });
  });

  it('names what is missing, and refuses providers without a realtime API', () => {
    expect(() =>
      realtimeUpstream(target({ 'x-gateway-provider': 'openai' }), new URLSearchParams(), {}),
    ).toThrow(expect.objectContaining({ status: 400, param: 'authorization' }));
    expect(() =>
      realtimeUpstream(
        target({ 'x-gateway-provider': 'azure-openai', authorization: 'Bearer k' }),
        new URLSearchParams('model=m'),
        {},
      ),
    ).toThrow(expect.objectContaining({ status: 400, param: 'x-gateway-azure-resource-name' }));
    expect(() =>
      realtimeUpstream(
        target({
          'x-gateway-provider': 'azure-openai',
          authorization: 'Bearer k',
          'x-gateway-azure-resource-name': 'a',
        }),
        new URLSearchParams(),
        {},
      ),
    ).toThrow(expect.objectContaining({ status: 400, param: 'x-gateway-azure-deployment-id' }));
    expect(() =>
      realtimeUpstream(
        target({ 'x-gateway-provider': 'anthropic', authorization: 'Bearer k' }),
        new URLSearchParams(),
        {},
      ),
    ).toThrow(expect.objectContaining({ status: 400, code: 'route_not_supported' }));
  });
});

describe('realtime subprotocols', () => {
  const offered = {
    'sec-websocket-protocol':
      'realtime, x-gateway-api-key.sb-key, x-gateway-provider.openai, openai-insecure-api-key.sk-up, openai-beta.realtime-v1',
  };

  it('credentials carried in subprotocol entries become the headers they stand for', () => {
    expect(offeredProtocols(offered)).toHaveLength(5);
    expect(headersWithProtocolCredentials(offered)).toMatchObject({
      'x-gateway-api-key': 'sb-key',
      'x-gateway-provider': 'openai',
      authorization: 'Bearer sk-up',
      'openai-beta': 'realtime=v1',
    });
  });

  it('headers actually sent win over subprotocol entries', () => {
    const merged = headersWithProtocolCredentials({ ...offered, 'x-gateway-api-key': 'from-header' });
    expect(merged['x-gateway-api-key']).toBe('from-header');
  });

  it('answers realtime when offered, never an entry that carries a credential', () => {
    expect(selectProtocol(['x-gateway-api-key.secret', 'realtime'])).toBe('realtime');
    expect(selectProtocol(['x-gateway-api-key.secret', 'chat'])).toBe('chat');
    expect(selectProtocol(['x-gateway-api-key.secret', 'openai-insecure-api-key.sk'])).toBe(false);
    expect(selectProtocol([])).toBe(false);
  });
});

describe('realtime sessions', () => {
  it('close codes: the ones a close frame may carry', () => {
    for (const code of [1000, 1001, 1003, 1007, 1011, 1014, 3000, 4999])
      expect(isSendableCloseCode(code)).toBe(true);
    for (const code of [999, 1004, 1005, 1006, 1015, 2000, 5000])
      expect(isSendableCloseCode(code)).toBe(false);
  });

  it('usage of response.done events adds up in the chat usage shape', () => {
    const done = (input: number, output: number, cached: number, audioIn: number, audioOut: number) => ({
      type: 'response.done',
      response: {
        usage: {
          total_tokens: input + output,
          input_tokens: input,
          output_tokens: output,
          input_token_details: { cached_tokens: cached, audio_tokens: audioIn, text_tokens: input - audioIn },
          output_token_details: { audio_tokens: audioOut, text_tokens: output - audioOut },
        },
      },
    });
    let usage = addRealtimeUsage(undefined, done(100, 20, 10, 30, 5));
    usage = addRealtimeUsage(usage, done(50, 10, 0, 0, 0));
    usage = addRealtimeUsage(usage, { type: 'response.done', response: { status: 'failed' } });
    expect(usage).toEqual({
      prompt_tokens: 150,
      completion_tokens: 30,
      total_tokens: 180,
      prompt_tokens_details: { cached_tokens: 10, audio_tokens: 30 },
      completion_tokens_details: { audio_tokens: 5 },
    });
    expect(addRealtimeUsage(undefined, { type: 'response.done' })).toBeUndefined();
  });
});
