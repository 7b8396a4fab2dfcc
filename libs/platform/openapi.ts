import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { onSendHookHandler } from 'fastify';
import { DATABASE_RETRY_AFTER_SEC } from './problem.js';

export const BEARER_SCHEME = 'bearer';

/** Problem+json body (RFC 9457) as a reusable schema for error responses. */
const PROBLEM_SCHEMA = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail'],
  properties: {
    type: { type: 'string', example: 'about:blank' },
    title: { type: 'string', example: 'Bad Request' },
    status: { type: 'integer', example: 400 },
    detail: { type: 'string' },
    errors: {
      type: 'array',
      items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } } },
    },
  },
};

/**
 * What the `/docs` page may load: its own scripts (Swagger UI's bundle and init file, no inline script), its
 * own and inline styles and `data:` images (Swagger UI sets both), requests to this server (Try it out).
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const withDocsCsp: onSendHookHandler = (_request, reply, payload, done) => {
  void reply.header('content-security-policy', DOCS_CSP);
  done(null, payload);
};

/** Serves the OpenAPI page at `/docs` and the document at `/docs/openapi.json`. */
export function setupOpenApi(app: NestFastifyApplication, title: string, description: string): void {
  // On the docs routes only (added below, by Swagger): no other answer pays for the hook.
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRoute', (route) => {
      if (route.url === '/docs' || route.url.startsWith('/docs/')) {
        route.onSend = [route.onSend ?? [], withDocsCsp].flat();
      }
    });
  const config = new DocumentBuilder()
    .setTitle(title)
    .setDescription(description)
    .setVersion('0.1.0')
    .setLicense('UNLICENSED (proprietary)', 'https://docs.npmjs.com/cli/configuring-npm/package-json#license')
    // Relative: the document describes whichever host and port served it.
    .addServer('/', 'the server that served this document')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, BEARER_SCHEME)
    .build();
  const document = completeOperations(SwaggerModule.createDocument(app, config));
  document.components = {
    ...document.components,
    schemas: { ...document.components?.schemas, Problem: PROBLEM_SCHEMA },
  };
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'docs/openapi.json',
    yamlDocumentUrl: 'docs/openapi.yaml',
  });
}

/** Paths that never touch the database: no 503 for them. */
const WITHOUT_DATABASE = new Set(['/health/live', '/metrics']);

/**
 * What every operation shares, added in one place instead of on each route: a declared security
 * requirement (`[]` where no token is needed), 414 for any request target over the limit, 413 and 415
 * where a body is read, and the 503 with `Retry-After` of an unreachable database (DESIGN 3).
 */
function completeOperations(document: OpenAPIObject): OpenAPIObject {
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of ['get', 'put', 'post', 'delete', 'patch'] as const) {
      const operation = item[method];
      if (operation === undefined) continue;
      operation.security ??= [];
      const responses = operation.responses;
      responses['414'] ??= problemObject('The request target is longer than 8192 characters');
      if (operation.requestBody !== undefined) {
        responses['413'] ??= problemObject('The body is larger than the limit');
        responses['415'] ??= problemObject('The body is not application/json');
      }
      if (!WITHOUT_DATABASE.has(path)) {
        responses['503'] ??= {
          ...problemObject('The database is not reachable; retry after the given seconds'),
          headers: {
            'Retry-After': {
              description: `seconds to wait (${DATABASE_RETRY_AFTER_SEC})`,
              schema: { type: 'integer' },
            },
          },
        };
      }
    }
  }
  return document;
}

/** A problem+json response object as it stands in the document. */
const problemObject = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});

/** An error response documented as problem+json (the argument of `@ApiResponse`). */
export const problemResponse = (status: number, description: string) => ({ status, ...problemObject(description) });
