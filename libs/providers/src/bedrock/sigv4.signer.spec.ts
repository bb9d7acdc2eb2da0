import { createHash, createHmac } from 'node:crypto';
import { signAwsRequest } from './sigv4.signer';

const sha256 = (data: string) => createHash('sha256').update(data, 'utf8').digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();

/** SigV4 written out from the published algorithm, to check the library use against. */
function referenceSignature(input: {
  method: string;
  canonicalPath: string;
  headers: Record<string, string>;
  body: string;
  region: string;
  service: string;
  secret: string;
  amzDate: string;
}): { signedHeaders: string; signature: string } {
  const names = Object.keys(input.headers)
    .map((name) => name.toLowerCase())
    .sort();
  const lower = Object.fromEntries(
    Object.entries(input.headers).map(([k, v]) => [k.toLowerCase(), v.trim()]),
  );
  const canonicalRequest = [
    input.method,
    input.canonicalPath,
    '',
    ...names.map((name) => `${name}:${lower[name]}`),
    '',
    names.join(';'),
    sha256(input.body),
  ].join('\n');
  const day = input.amzDate.slice(0, 8);
  const scope = `${day}/${input.region}/${input.service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', input.amzDate, scope, sha256(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${input.secret}`, day), input.region), input.service), 'aws4_request');
  return {
    signedHeaders: names.join(';'),
    signature: createHmac('sha256', key).update(stringToSign).digest('hex'),
  };
}

describe('signAwsRequest', () => {
  const date = new Date('2025-01-02T03:04:05Z');
  const body = '{"messages":[]}';
  const credentials = {
    accessKeyId: 'AKIDEXAMPLE',
    secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  };

  it('matches an independent SigV4 computation, with the encoded model id encoded twice in the canonical path', async () => {
    const url =
      'https://bedrock-runtime.eu-west-1.amazonaws.com/model/' +
      encodeURIComponent(
        'arn:aws:bedrock:eu-west-1:123456789012:inference-profile/eu.anthropic.claude-3-7-sonnet',
      ) +
      '/converse';
    const headers = await signAwsRequest({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body,
      region: 'eu-west-1',
      service: 'bedrock',
      credentials,
      signingDate: date,
    });
    const expected = referenceSignature({
      method: 'POST',
      canonicalPath:
        '/model/arn%253Aaws%253Abedrock%253Aeu-west-1%253A123456789012%253Ainference-profile%252Feu.anthropic.claude-3-7-sonnet/converse',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        host: 'bedrock-runtime.eu-west-1.amazonaws.com',
        'x-amz-date': '20250102T030405Z',
      },
      body,
      region: 'eu-west-1',
      service: 'bedrock',
      secret: credentials.secretAccessKey,
      amzDate: '20250102T030405Z',
    });
    expect(headers).toEqual({
      'content-type': 'application/json',
      accept: 'application/json',
      host: 'bedrock-runtime.eu-west-1.amazonaws.com',
      'x-amz-date': '20250102T030405Z',
      authorization:
        `AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20250102/eu-west-1/bedrock/aws4_request, ` +
        `SignedHeaders=${expected.signedHeaders}, Signature=${expected.signature}`,
    });
    expect(expected.signedHeaders).toBe('accept;content-type;host;x-amz-date');
  });

  it('signs the session token and is deterministic for a fixed date and credentials', async () => {
    const sign = () =>
      signAwsRequest({
        method: 'POST',
        url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.nova-pro-v1%3A0/converse',
        headers: { 'content-type': 'application/json' },
        body,
        region: 'us-east-1',
        service: 'bedrock',
        credentials: { ...credentials, sessionToken: 'session-token' },
        signingDate: date,
      });
    const first = await sign();
    expect(await sign()).toEqual(first);
    expect(first['x-amz-security-token']).toBe('session-token');
    const expected = referenceSignature({
      method: 'POST',
      canonicalPath: '/model/amazon.nova-pro-v1%253A0/converse',
      headers: {
        'content-type': 'application/json',
        host: 'bedrock-runtime.us-east-1.amazonaws.com',
        'x-amz-date': '20250102T030405Z',
        'x-amz-security-token': 'session-token',
      },
      body,
      region: 'us-east-1',
      service: 'bedrock',
      secret: credentials.secretAccessKey,
      amzDate: '20250102T030405Z',
    });
    expect(first.authorization).toBe(
      `AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20250102/us-east-1/bedrock/aws4_request, ` +
        `SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, Signature=${expected.signature}`,
    );
    // A different body must change the signature.
    const other = await signAwsRequest({
      method: 'POST',
      url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.nova-pro-v1%3A0/converse',
      headers: { 'content-type': 'application/json' },
      body: '{}',
      region: 'us-east-1',
      service: 'bedrock',
      credentials: { ...credentials, sessionToken: 'session-token' },
      signingDate: date,
    });
    expect(other.authorization).not.toBe(first.authorization);
  });
});
