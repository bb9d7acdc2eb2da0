import Fastify from 'fastify';
import pino from 'pino';
import { Writable } from 'node:stream';
import { PinoLogger } from 'nestjs-pino';
import { registerAccessLog } from './access-log';

describe('control-plane access log', () => {
  const lines: Record<string, unknown>[] = [];
  const root = (PinoLogger as unknown as { root: pino.Logger }).root;
  beforeAll(() => {
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    (PinoLogger as unknown as { root: pino.Logger }).root = pino({ level: 'info' }, sink);
  });
  afterAll(() => {
    (PinoLogger as unknown as { root: pino.Logger }).root = root;
  });

  it('one flat line per control-plane request, none for data-plane routes or health, no headers', async () => {
    const app = Fastify();
    registerAccessLog(app);
    app.get('/v1/admin/things', async () => ({ ok: true }));
    app.get('/v1/broken', async (_request, reply) => reply.status(503).send({ down: true }));
    app.post('/v1/chat/completions', { config: { dataPlane: true } }, async () => ({ ok: true }));
    app.get('/v1/health', async () => 'ok');
    await app.ready();
    await app.inject({
      method: 'GET',
      url: '/v1/admin/things',
      headers: { 'x-gateway-api-key': 'sb-secret' },
    });
    await app.inject({ method: 'GET', url: '/v1/broken' });
    await app.inject({ method: 'POST', url: '/v1/chat/completions', payload: {} });
    await app.inject({ method: 'GET', url: '/v1/health' });
    await app.close();

    expect(lines.map((line) => [line.level, line.method, line.url, line.statusCode])).toEqual([
      [30, 'GET', '/v1/admin/things', 200],
      [50, 'GET', '/v1/broken', 503],
    ]);
    expect(lines[0]).toMatchObject({ msg: 'request completed', reqId: expect.anything() });
    expect(JSON.stringify(lines)).not.toContain('sb-secret');
  });
});
