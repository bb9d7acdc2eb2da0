export { bedrockAdapter } from './bedrock.adapter';
