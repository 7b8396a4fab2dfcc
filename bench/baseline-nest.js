// The smallest Nest app doing what the auth benchmark measures: Nest 12 on @nestjs/platform-fastify serving
// GET /tags/:tagId behind a bearer guard (jsonwebtoken against the bench JWKS, each verification remembered
// per token until it expires, as Bindery does), one route parameter, the raw baseline's SELECT through pg, no
// logging. It is the yardstick for "what Nest itself costs": Bindery / this app is the cost of Bindery's layers.
// Plain JavaScript, so decorators are applied by hand (no TypeScript metadata; providers injected by token).
import 'reflect-metadata';
import { createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  Controller,
  Get,
  Inject,
  Injectable,
  Module,
  Param,
  Res,
  UnauthorizedException,
  UseGuards,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import jwt from 'jsonwebtoken';
import pg from 'pg';
import { query } from './baseline-query.js';
import { announce } from './serve.js';
import { SELECT_TAG, tagView } from './tag-row.js';

const POOL = 'POOL';

const keys = new Map(
  JSON.parse(readFileSync(process.env.JWT_JWKS_FILE, 'utf8')).keys.map((jwk) => [
    jwk.kid,
    createPublicKey({ key: jwk, format: 'jwk' }),
  ]),
);
const verifyOptions = {
  algorithms: ['ES256'],
  issuer: process.env.JWT_ISSUER,
  audience: process.env.JWT_AUDIENCE,
};
/** token → { claims, until }: a verification is remembered until the token expires (Bindery: at most 60 s). */
const remembered = new Map();

class BearerGuard {
  canActivate(context) {
    const request = context.switchToHttp().getRequest();
    const header = request.headers.authorization;
    if (typeof header !== 'string' || !header.startsWith('Bearer ')) throw new UnauthorizedException();
    const token = header.slice(7);
    const now = Date.now();
    const hit = remembered.get(token);
    if (hit !== undefined && hit.until > now) {
      request.user = hit.claims;
      return true;
    }
    try {
      const kid = JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString('utf8')).kid;
      const key = keys.get(kid);
      if (key === undefined) throw new Error('unknown kid');
      const claims = jwt.verify(token, key, verifyOptions);
      remembered.set(token, { claims, until: Math.min(claims.exp * 1000, now + 60_000) });
      request.user = claims;
      return true;
    } catch {
      throw new UnauthorizedException();
    }
  }
}
Injectable()(BearerGuard);

class TagsController {
  constructor(pool) {
    this.pool = pool;
  }

  async get(tagId, reply) {
    const { rows } = await query(this.pool, SELECT_TAG, [tagId]);
    if (rows.length === 0) return { status: 404, title: 'Not Found' };
    const t = rows[0];
    void reply.header('etag', `W/"${t.aggregate_version}"`);
    return tagView(t);
  }
}
Inject(POOL)(TagsController, undefined, 0);
Param('tagId')(TagsController.prototype, 'get', 0);
Res({ passthrough: true })(TagsController.prototype, 'get', 1);
Get(':tagId')(TagsController.prototype, 'get', Object.getOwnPropertyDescriptor(TagsController.prototype, 'get'));
UseGuards(BearerGuard)(TagsController);
Controller('tags')(TagsController);

class AppModule {}
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.POOL_SIZE ?? 10) });
Module({ controllers: [TagsController], providers: [{ provide: POOL, useValue: pool }, BearerGuard] })(AppModule);

const app = await NestFactory.create(AppModule, new FastifyAdapter(), { logger: false });
await app.listen(0, '127.0.0.1');
announce(app.getHttpServer().address().port, () => app.close().then(() => pool.end()));
