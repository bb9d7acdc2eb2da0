export { googleAdapter } from './gemini.adapter';
export { vertexAdapter } from './vertex.adapter';
