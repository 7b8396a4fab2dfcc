import type { KeyObject } from 'node:crypto';
import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import type { JWTPayload } from 'jose';
import passport from 'passport';
import { Strategy, type SecretOrKeyProvider } from 'passport-jwt';
import { bearerToken } from './bearer.js';
import type { Principal } from './claims.js';
import { TokenVerifier } from './token-verifier.js';

// Each app instance registers its own strategy name: passport's registry is process-global, and tests (or
// an embedding process) may run several apps with different key settings side by side.
let strategies = 0;

/**
 * passport-jwt over the one `TokenVerifier`: its key provider (pre-screen, then the key parsed once and
 * chosen by `kid`) and its jsonwebtoken options, so HTTP and WebSocket accept exactly the same tokens.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy) implements OnApplicationShutdown {
  override readonly name: string;
  /** The key each request's token was verified with, so the verification cache remembers that very key. */
  private readonly keys: WeakMap<FastifyRequest, KeyObject>;

  constructor(private readonly verifier: TokenVerifier) {
    const { issuer, audience } = verifier.policy;
    const keys = new WeakMap<FastifyRequest, KeyObject>();
    super({
      jwtFromRequest: (request: FastifyRequest) => bearerToken(request.headers.authorization) ?? null,
      secretOrKeyProvider: ((request: FastifyRequest, raw: string, done: (error: unknown, key?: KeyObject) => void) => {
        verifier.keyFor(raw).then(
          (key) => {
            keys.set(request, key);
            done(null, key);
          },
          (error: unknown) => done(error),
        );
      }) as SecretOrKeyProvider,
      issuer,
      audience,
      algorithms: verifier.options.algorithms,
      // passport-jwt lets its top-level issuer/audience/algorithms win; they are the same values.
      jsonWebTokenOptions: verifier.options,
      passReqToCallback: true,
    });
    this.keys = keys;
    this.name = `bindery-jwt-${++strategies}`;
    passport.use(this.name, this);
  }

  validate(request: FastifyRequest, payload: JWTPayload): Principal {
    const key = this.keys.get(request);
    // passport calls validate only after verifying with the provider's key: without one, nothing was verified.
    if (key === undefined) throw new Error('passport-jwt verified a token without a key from the provider');
    return this.verifier.accept(bearerToken(request.headers.authorization) as string, payload, key);
  }

  // After the HTTP server closed: requests still in flight during shutdown need the strategy.
  onApplicationShutdown(): void {
    passport.unuse(this.name);
  }
}
