import { Module } from '@nestjs/common';
import { SETTINGS, type Settings } from '#platform';
import { issuerKeyRingFor } from '#token-binding';
import { ClientsController } from './clients.controller.js';
import { ClientsService } from './clients.service.js';
import { IssuerDiscoveryWarning } from './discovery-warning.js';
import { SecretChecker } from './client-secrets.js';
import { FailureLimiter } from './failure-limiter.js';
import { TokenController } from './token.controller.js';
import { ISSUER_KEYS, TokenIssuerService } from './token-issuer.service.js';

/**
 * The built-in client-credentials issuer (DESIGN 10): `POST /oauth2/token`, its public keys and metadata,
 * and the client records operators manage. Keys are parsed once, at start.
 */
@Module({
  controllers: [TokenController, ClientsController],
  providers: [
    {
      provide: ISSUER_KEYS,
      inject: [SETTINGS],
      useFactory: (settings: Settings) => issuerKeyRingFor(settings.tokenIssuer.keyFile, settings.dataDir),
    },
    { provide: FailureLimiter, useFactory: () => new FailureLimiter() },
    SecretChecker,
    TokenIssuerService,
    ClientsService,
    IssuerDiscoveryWarning,
  ],
})
export class TokenIssuerModule {}
