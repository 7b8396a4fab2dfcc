import type { DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Logger } from 'nestjs-pino';
import { useJsonBodiesOnly } from './json-body.js';
import { requestId } from './logging.js';
import { Metrics } from './metrics.js';
import { setupOpenApi } from './openapi.js';
import { ProblemFilter, sendError } from './problem.js';
import { validationPipe } from './validation.js';

export const BODY_LIMIT_BYTES = 1024 * 1024;

/** A Nest app on Fastify with the shared edge: problem+json errors, strict validation, pino logs. */
export interface HttpAppOptions {
  /** Title and description of the OpenAPI page served at `/docs`. */
  readonly openApi?: { readonly title: string; readonly description: string };
}

export async function createHttpApp(
  root: DynamicModule,
  options: HttpAppOptions = {},
): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: requestId,
    // Keep-alive sockets that sit idle are closed on shutdown; in-flight requests finish.
    forceCloseConnections: 'idle',
    return503OnClosing: true,
    // Errors Fastify raises before routing (bad percent-encoding, bad content type) are problem+json too.
    frameworkErrors: (error: Error, _request: FastifyRequest, reply: FastifyReply) => sendError(reply, error),
  });
  // Nest's parsers (JSON, form, text) are replaced by the one JSON parser with a depth limit.
  const app = await NestFactory.create<NestFastifyApplication>(root, adapter, { bufferLogs: true, bodyParser: false });
  useJsonBodiesOnly(app.getHttpAdapter().getInstance(), BODY_LIMIT_BYTES);
  app.useLogger(app.get(Logger));
  // Nest routes Fastify's own errors (bad JSON, body too large) through this filter too.
  app.useGlobalFilters(new ProblemFilter());
  app.useGlobalPipes(validationPipe());
  const metrics = app.get(Metrics);
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRequest', (request, reply, done) => {
      // Echo the request id so a caller can quote it when reporting a problem.
      void reply.header('x-request-id', request.id);
      done();
    })
    .addHook('onResponse', (request, reply, done) => {
      // The route template keeps label cardinality bounded; unmatched paths share one label.
      metrics.observe(
        request.method,
        request.routeOptions.url ?? 'unmatched',
        reply.statusCode,
        reply.elapsedTime / 1000,
      );
      done();
    });
  if (options.openApi !== undefined) setupOpenApi(app, options.openApi.title, options.openApi.description);
  return app;
}
