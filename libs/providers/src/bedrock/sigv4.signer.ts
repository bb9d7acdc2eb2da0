import { Sha256 } from '@aws-crypto/sha256-js';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface SignedRequestInput {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  region: string;
  service: string;
  credentials: AwsCredentials;
  /** Fixed in tests so the signature is reproducible. */
  signingDate?: Date;
}

/**
 * Signs a request with AWS Signature Version 4 and returns the headers to send (the input headers
 * plus host, x-amz-date, x-amz-security-token when a session token is used, and authorization).
 */
export async function signAwsRequest(input: SignedRequestInput): Promise<Record<string, string>> {
  const url = new URL(input.url);
  const query: Record<string, string> = {};
  url.searchParams.forEach((value, key) => {
    query[key] = value;
  });
  const request = new HttpRequest({
    method: input.method,
    protocol: url.protocol,
    hostname: url.hostname,
    port: url.port ? Number(url.port) : undefined,
    // The path stays percent-encoded as it goes on the wire; the signer encodes it once more, which
    // is the canonical form AWS expects for every service but S3.
    path: url.pathname,
    query,
    headers: { ...input.headers, host: url.host },
    body: input.body,
  });
  const signer = new SignatureV4({
    service: input.service,
    region: input.region,
    credentials: input.credentials,
    sha256: Sha256,
    // Bedrock does not require x-amz-content-sha256; leaving it out keeps the header set minimal.
    applyChecksum: false,
  });
  const signed = await signer.sign(request, { signingDate: input.signingDate });
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(signed.headers)) {
    headers[name.toLowerCase()] = String(value);
  }
  return headers;
}
