import { parseMetadata, readTraceHeaders } from './request-headers';
import { resolveTarget } from './provider-resolution';

describe('resolveTarget', () => {
  it('answers null when no provider is named', () => {
    expect(resolveTarget({})).toBeNull();
  });

  it('direct auth: provider name plus Authorization bearer', () => {
    const target = resolveTarget({ 'x-gateway-provider': 'openai', authorization: 'Bearer sk-test' });
    expect(target?.adapter.id).toBe('openai');
    expect(target?.credentials).toEqual({ apiKey: 'sk-test' });
  });

  it('direct auth plus custom host, trailing slash dropped', () => {
    const target = resolveTarget({
      'x-gateway-provider': 'openai',
      authorization: 'Bearer sk-test',
      'x-gateway-custom-host': 'http://127.0.0.1:9999/v1/',
    });
    expect(target?.credentials.customHost).toBe('http://127.0.0.1:9999/v1');
  });

  it('rejects a custom host that is not http(s)', () => {
    expect(() =>
      resolveTarget({ 'x-gateway-provider': 'openai', 'x-gateway-custom-host': 'file:///etc/passwd' }),
    ).toThrow(expect.objectContaining({ status: 400, param: 'x-gateway-custom-host' }));
  });

  it('reads provider credential headers', () => {
    const target = resolveTarget({
      'x-gateway-provider': 'bedrock',
      'x-gateway-aws-access-key-id': 'AKIA',
      'x-gateway-aws-secret-access-key': 'secret',
      'x-gateway-aws-region': 'eu-west-1',
    });
    expect(target?.credentials).toEqual({
      awsAccessKeyId: 'AKIA',
      awsSecretAccessKey: 'secret',
      awsRegion: 'eu-west-1',
    });
  });

  it('an unknown provider is a 400 naming it', () => {
    expect(() => resolveTarget({ 'x-gateway-provider': 'nope' })).toThrow(
      expect.objectContaining({ status: 400, code: 'unknown_provider' }),
    );
  });

  it('an unknown @slug or virtual key is a 404', () => {
    expect(() => resolveTarget({ 'x-gateway-provider': '@team-openai' })).toThrow(
      expect.objectContaining({ status: 404 }),
    );
    expect(() => resolveTarget({ 'x-gateway-virtual-key': 'vk' })).toThrow(
      expect.objectContaining({ status: 404 }),
    );
  });

  it('an inline config with one target', () => {
    const target = resolveTarget({
      'x-gateway-config': JSON.stringify({
        targets: [{ provider: 'anthropic', api_key: 'k', override_params: { max_tokens: 10 } }],
      }),
    });
    expect(target?.adapter.id).toBe('anthropic');
    expect(target?.credentials.apiKey).toBe('k');
    expect(target?.overrideParams).toEqual({ max_tokens: 10 });
  });

  it('a bad inline config is AB01 naming the path', () => {
    expect(() =>
      resolveTarget({ 'x-gateway-config': JSON.stringify({ targets: [{ api_key: 'k' }] }) }),
    ).toThrow(expect.objectContaining({ code: 'AB01', param: 'targets[0].provider' }));
    expect(() => resolveTarget({ 'x-gateway-config': '{oops' })).toThrow(
      expect.objectContaining({ code: 'AB01' }),
    );
  });
});

describe('request headers', () => {
  it('parses metadata as a string map', () => {
    expect(parseMetadata('{"user":"u1","n":3}')).toEqual({ user: 'u1', n: '3' });
  });

  it.each(['not json', '[1]', '{"a":{"b":1}}', '"x"'])('rejects malformed metadata %s', (raw) => {
    expect(() => parseMetadata(raw)).toThrow(
      expect.objectContaining({ status: 400, param: 'x-gateway-metadata' }),
    );
  });

  it('reads span headers and strict compliance', () => {
    const read = readTraceHeaders({
      'x-gateway-span-id': 's1',
      'x-gateway-parent-span-id': 'p1',
      'x-gateway-span-name': 'step',
      'x-gateway-strict-openai-compliance': 'false',
    });
    expect(read).toEqual({
      spanId: 's1',
      parentSpanId: 'p1',
      spanName: 'step',
      metadata: null,
      strictOpenAiCompliance: false,
    });
  });
});
