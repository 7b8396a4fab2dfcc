import { NotFoundException } from '@nestjs/common';
import { describe, expect, it } from '@jest/globals';
import { PlainTextException, ProblemException, renderError } from './problem.js';

describe('renderError', () => {
  it('never shows internals of an unexpected error', () => {
    const rendered = renderError(new Error('connect ECONNREFUSED 10.0.0.7:5432 password=hunter2'));
    expect(rendered.status).toBe(500);
    expect(rendered.contentType).toBe('application/problem+json');
    expect(JSON.parse(rendered.body)).toEqual({
      type: 'about:blank',
      title: 'Internal Server Error',
      status: 500,
      detail: 'Internal Server Error',
    });
  });

  it('renders problems with their field errors and headers', () => {
    const rendered = renderError(
      new ProblemException(401, 'A bearer token is required', { headers: { 'www-authenticate': 'Bearer' } }),
    );
    expect(rendered).toMatchObject({ status: 401, headers: { 'www-authenticate': 'Bearer' } });
    const invalid = renderError(new ProblemException(400, 'bad', { errors: [{ field: 'a', message: 'm' }] }));
    expect(JSON.parse(invalid.body)).toMatchObject({ status: 400, title: 'Bad Request', errors: [{ field: 'a' }] });
  });

  it("maps Nest's own HTTP exceptions and Fastify's client errors to problem+json", () => {
    expect(JSON.parse(renderError(new NotFoundException('Cannot GET /x')).body)).toMatchObject({ status: 404 });
    const tooLarge = Object.assign(new Error('Request body is too large'), {
      statusCode: 413,
      code: 'FST_ERR_CTP_BODY_TOO_LARGE',
    });
    expect(renderError(tooLarge)).toMatchObject({ status: 413, contentType: 'application/problem+json' });
  });

  it('shows neither the query of an unknown route nor the URL Fastify could not decode (DESIGN 3)', () => {
    const detail = (error: unknown) => (JSON.parse(renderError(error).body) as { detail: string }).detail;
    expect(detail(new NotFoundException('Cannot GET /x?access_token=s3cret'))).toBe('No route for GET /x');
    expect(detail(new NotFoundException(`Cannot GET /${'x'.repeat(300)}?a=s3cret`))).toBe(
      'No route for GET on this path',
    );
    const badUrl = Object.assign(new Error("'/tags/%ED%A0%80?access_token=s3cret' is not a valid url component"), {
      statusCode: 400,
      code: 'FST_ERR_BAD_URL',
    });
    expect(detail(badUrl)).toBe('Malformed percent-encoding in the request path');
    const unknown = Object.assign(new Error('/x?access_token=s3cret'), { statusCode: 400, code: 'FST_ERR_NEW' });
    expect(detail(unknown)).toBe('Bad Request');
  });

  it('answers the binding rejection as plain text', () => {
    const rendered = renderError(new PlainTextException(403, 'Token sid does not match requested serviceId'));
    expect(rendered).toMatchObject({ status: 403, body: 'Token sid does not match requested serviceId' });
    expect(rendered.contentType).toMatch(/^text\/plain/);
  });

  it('captures no stack for expected 4xx answers, and keeps it for 5xx', () => {
    expect(new ProblemException(404, 'x').stack?.split('\n')).toHaveLength(1);
    expect(new ProblemException(503, 'x').stack?.split('\n').length).toBeGreaterThan(1);
    expect(Error.stackTraceLimit).toBeGreaterThan(0);
  });
});
