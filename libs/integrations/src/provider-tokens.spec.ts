import { createPublicKey, createVerify, generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { ProviderTokens, serviceAccountAssertion, tokenRequestFor } from './provider-tokens';

const { privateKey, publicKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});

describe('service account assertion', () => {
  it('is an RS256 JWT for the token endpoint, signed with the service account key', () => {
    const now = Date.UTC(2026, 0, 1);
    const jwt = serviceAccountAssertion(
      {
        client_email: 'sa@p.iam.gserviceaccount.com',
        private_key: privateKey,
        private_key_id: 'kid-1',
        token_uri: 'https://t/token',
      },
      now,
    );
    const [header, claims, signature] = jwt.split('.');
    expect(JSON.parse(Buffer.from(header, 'base64url').toString())).toEqual({
      alg: 'RS256',
      typ: 'JWT',
      kid: 'kid-1',
    });
    expect(JSON.parse(Buffer.from(claims, 'base64url').toString())).toEqual({
      iss: 'sa@p.iam.gserviceaccount.com',
      scope: 'https://www.googleapis.com/auth/cloud-platform',
      aud: 'https://t/token',
      iat: now / 1000,
      exp: now / 1000 + 3600,
    });
    const verified = createVerify('RSA-SHA256')
      .update(`${header}.${claims}`)
      .verify(createPublicKey(publicKey), Buffer.from(signature, 'base64url'));
    expect(verified).toBe(true);
  });
});

describe('tokenRequestFor', () => {
  it('only providers whose credentials must be exchanged need a token', () => {
    expect(tokenRequestFor('openai', {})).toBeNull();
    expect(tokenRequestFor('vertex-ai', { vertex_project_id: 'p' })).toBeNull();
    expect(tokenRequestFor('azure-openai', { azure_auth_mode: 'default' })).toBeNull();
    const entra = tokenRequestFor('azure-openai', {
      azure_auth_mode: 'entra',
      azure_entra_tenant_id: 't',
      azure_entra_client_id: 'c',
      azure_entra_client_secret: 's',
    });
    expect(entra?.description).toBe('Entra ID application c');
    const changed = tokenRequestFor('azure-openai', {
      azure_auth_mode: 'entra',
      azure_entra_tenant_id: 't',
      azure_entra_client_id: 'c',
      azure_entra_client_secret: 's2',
    });
    expect(changed?.cacheKey).not.toBe(entra?.cacheKey);
  });
});

describe('ProviderTokens', () => {
  it('mints once for concurrent callers, serves from memory, and remembers a failure briefly', async () => {
    let calls = 0;
    let fail = false;
    const server = createServer((_request, response) => {
      calls += 1;
      response.writeHead(fail ? 400 : 200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify(
          fail
            ? { error: 'invalid_grant', error_description: 'bad key' }
            : { access_token: `t${calls}`, expires_in: 3600 },
        ),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const tokenUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
    try {
      const tokens = new ProviderTokens();
      const request = tokenRequestFor('vertex-ai', {
        vertex_service_account_json: { client_email: 'sa@p', private_key: privateKey, token_uri: tokenUri },
      })!;
      expect(tokens.peek(request)).toBeUndefined();
      const [a, b] = await Promise.all([tokens.get(request), tokens.get(request)]);
      expect([a, b]).toEqual(['t1', 't1']);
      expect(tokens.peek(request)).toBe('t1');
      expect(calls).toBe(1);

      fail = true;
      const other = tokenRequestFor('vertex-ai', {
        vertex_service_account_json: {
          client_email: 'other@p',
          private_key: privateKey,
          token_uri: tokenUri,
        },
      })!;
      await expect(tokens.get(other)).rejects.toThrow(/refused a token: bad key/);
      await expect(tokens.get(other)).rejects.toThrow(/bad key/);
      expect(calls).toBe(2);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
