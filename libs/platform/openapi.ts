import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';

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

/** Serves the OpenAPI page at `/docs` and the document at `/docs/openapi.json`. */
export function setupOpenApi(app: INestApplication, title: string, description: string): void {
  const config = new DocumentBuilder()
    .setTitle(title)
    .setDescription(description)
    .setVersion('0.1.0')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, BEARER_SCHEME)
    .build();
  const document = SwaggerModule.createDocument(app, config);
  document.components = {
    ...document.components,
    schemas: { ...document.components?.schemas, Problem: PROBLEM_SCHEMA },
  };
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'docs/openapi.json',
    yamlDocumentUrl: 'docs/openapi.yaml',
  });
}

/** An error response documented as problem+json. */
export const problemResponse = (status: number, description: string) => ({
  status,
  description,
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});
