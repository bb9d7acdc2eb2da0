import { All, Controller, Delete, Get, Post, Req, Res } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ApiHeader, ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Authenticated } from '@switchboard/access';
import { GatewayErrors } from './gateway.errors';
import { GatewayService } from './gateway.service';
import { OPENAI_PROXY_PREFIXES } from './route-table';

const PROVIDER_HEADERS = [
  ApiHeader({
    name: 'x-gateway-provider',
    required: false,
    description: 'Provider name (with Authorization) or @slug',
  }),
  ApiHeader({ name: 'x-gateway-virtual-key', required: false }),
  ApiHeader({ name: 'x-gateway-config', required: false, description: 'Config id, slug or inline JSON' }),
  ApiHeader({ name: 'x-gateway-custom-host', required: false }),
  ApiHeader({ name: 'x-gateway-trace-id', required: false }),
  ApiHeader({ name: 'x-gateway-metadata', required: false, description: 'JSON object' }),
];

function documented(summary: string): MethodDecorator {
  return (target, key, descriptor) => {
    ApiOperation({ summary })(target, key, descriptor);
    // Data-plane routes write their own log records; the control plane's access log skips them.
    RouteConfig({ dataPlane: true })(target, key, descriptor);
    for (const decorator of PROVIDER_HEADERS) decorator(target, key, descriptor);
  };
}

/** The OpenAI-shaped data plane. Each handler is one call; the service owns the reply. */
@ApiTags('Gateway')
@Controller()
export class GatewayController {
  constructor(private readonly gateway: GatewayService) {}

  @Post('chat/completions')
  @Authenticated({ permission: 'completions.write' })
  @documented('Chat completions, streamed or not, on any provider')
  chat(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.gateway.handle('chat.completions', request, reply);
  }

  @Post('completions')
  @Authenticated({ permission: 'completions.write' })
  @documented('Text completions')
  completions(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.gateway.handle('completions', request, reply);
  }

  @Post('embeddings')
  @Authenticated({ permission: 'completions.write' })
  @documented('Embeddings')
  embeddings(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.gateway.handle('embeddings', request, reply);
  }

  @Post('moderations')
  @Authenticated({ permission: 'completions.write' })
  @documented('Moderations')
  moderations(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.gateway.handle('moderations', request, reply);
  }

  @Post('images/generations')
  @Authenticated({ permission: 'completions.write' })
  @documented('Image generation')
  imageGenerations(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.gateway.handle('images.generations', request, reply);
  }

  @Post('images/edits')
  @Authenticated({ permission: 'completions.write' })
  @documented('Image edits (multipart, forwarded intact)')
  imageEdits(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.gateway.handle('images.edits', request, reply);
  }

  @Post('images/variations')
  @Authenticated({ permission: 'completions.write' })
  @documented('Image variations (multipart, forwarded intact)')
  imageVariations(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.gateway.handle('images.variations', request, reply);
  }

  @Post('audio/speech')
  @Authenticated({ permission: 'completions.write' })
  @documented('Text to speech')
  speech(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.gateway.handle('audio.speech', request, reply);
  }

  @Post('audio/transcriptions')
  @Authenticated({ permission: 'completions.write' })
  @documented('Transcriptions (multipart, forwarded intact)')
  transcriptions(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.gateway.handle('audio.transcriptions', request, reply);
  }

  @Post('audio/translations')
  @Authenticated({ permission: 'completions.write' })
  @documented('Translations (multipart, forwarded intact)')
  translations(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.gateway.handle('audio.translations', request, reply);
  }

  @Post('rerank')
  @Authenticated({ permission: 'completions.write' })
  @documented('Rerank')
  rerank(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.gateway.handle('rerank', request, reply);
  }

  @Post('messages')
  @Authenticated({ permission: 'completions.write' })
  @documented('Anthropic-shaped Messages')
  messages(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.gateway.handle('messages', request, reply);
  }

  @Post('responses')
  @Authenticated({ permission: 'completions.write' })
  @documented('Responses')
  responses(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.gateway.handle('responses', request, reply);
  }

  @Get('models')
  @Authenticated({ permission: 'completions.write' })
  @documented('Models of the chosen provider')
  models(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.gateway.handle('models.list', request, reply);
  }

  @Get('models/:model')
  @Authenticated({ permission: 'completions.write' })
  @documented('One model of the chosen provider')
  model(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.gateway.handle('models.retrieve', request, reply);
  }

  @Get('realtime')
  @Authenticated({ permission: 'completions.write' })
  @ApiQuery({
    name: 'model',
    required: false,
    description: 'The realtime model (OpenAI) or deployment (Azure)',
  })
  @ApiResponse({ status: 101, description: 'Switching protocols: the session is relayed to the provider' })
  @documented(
    'Realtime: a WebSocket relayed to the provider (OpenAI, Azure OpenAI). A plain GET answers 426; browsers may send the gateway key as the subprotocol x-gateway-api-key.<key>',
  )
  realtime(): never {
    // Upgrades never reach Fastify: RealtimeProxy answers them on the server's upgrade event.
    throw GatewayErrors.upgradeRequired();
  }

  @All(OPENAI_PROXY_PREFIXES.flatMap((prefix) => [prefix, `${prefix}/*`]))
  @Authenticated({ permission: 'completions.write' })
  @documented(
    'Files, batches, fine-tuning, assistants, threads, vector stores and responses by id, in the OpenAI shape',
  )
  openAiResources(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.gateway.handle('openai.proxy', request, reply);
  }

  @Get('responses/*')
  @Authenticated({ permission: 'completions.write' })
  @documented('A stored response, or its input items')
  responseById(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.gateway.handle('openai.proxy', request, reply);
  }

  @Delete('responses/*')
  @Authenticated({ permission: 'completions.write' })
  @documented('Delete a stored response')
  deleteResponse(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.gateway.handle('openai.proxy', request, reply);
  }
}

/**
 * Any other path goes to the chosen provider untouched. Registered in its own controller, after
 * every other module, so that the wildcard never shadows a real route.
 */
@ApiTags('Gateway')
@Controller()
export class PassthroughController {
  constructor(private readonly gateway: GatewayService) {}

  @All('*')
  @Authenticated({ permission: null })
  @documented('Passthrough: any other provider path, forwarded as sent and answered exactly as received')
  passthrough(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.gateway.handle('passthrough', request, reply);
  }
}
