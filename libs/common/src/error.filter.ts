import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, CommonErrors, errorTypeForStatus } from './app-error';

/** Turns anything thrown into the OpenAI envelope; unknown errors become a generic 500 with a logged stack. */
export function toAppError(exception: unknown, request?: FastifyRequest): AppError {
  if (exception instanceof AppError) return exception;
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    if (status === 404 && request)
      return CommonErrors.routeNotFound(request.method, request.url.split('?')[0]);
    const response = exception.getResponse();
    const message =
      typeof response === 'string'
        ? response
        : Array.isArray((response as { message?: unknown }).message)
          ? ((response as { message: string[] }).message[0] ?? exception.message)
          : String((response as { message?: unknown }).message ?? exception.message);
    const code = status === 400 && /JSON/.test(message) ? 'invalid_json' : errorTypeForStatus(status);
    return new AppError(status, code, message, null);
  }
  // Fastify's own errors (body parsing, content type, size) carry a statusCode and a FST_ code.
  const fastifyError = exception as { statusCode?: number; code?: string; message?: string };
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode < 500 && fastifyError.code) {
    const status = fastifyError.statusCode;
    const message =
      fastifyError.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || /JSON/.test(fastifyError.message ?? '')
        ? 'The request body is not valid JSON'
        : fastifyError.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
          ? 'The request body is too large'
          : fastifyError.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
            ? 'Unsupported Content-Type for this route'
            : (fastifyError.message ?? 'Bad request');
    return new AppError(
      status,
      fastifyError.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ? 'invalid_json' : 'bad_request',
      message,
    );
  }
  return CommonErrors.internal();
}

const logger = new Logger('Errors');

export function sendError(exception: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const error = toAppError(exception, request);
  if (error.status >= 500 && !(exception instanceof AppError)) {
    logger.error(
      { err: exception, traceId: request.traceId, method: request.method, url: request.url },
      exception instanceof Error ? exception.stack : String(exception),
    );
  }
  if (reply.sent) return;
  if (error.headers) reply.headers(error.headers);
  reply.status(error.status).type('application/json').send(error.toEnvelope());
}

@Catch()
export class ErrorEnvelopeFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    sendError(exception, http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>());
  }
}
