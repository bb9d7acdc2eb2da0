/** Mock upstream servers for e2e tests; see `mock-server.ts` for recording and fault injection. */
export * from './mock-server';
export * from './openai-mock';
export * from './anthropic-mock';
export * from './gemini-mock';
export * from './bedrock-mock';
export * from './cohere-mock';
export * from './realtime-mock';
