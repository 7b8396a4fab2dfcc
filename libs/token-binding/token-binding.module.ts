import { Global, Module } from '@nestjs/common';
import { SETTINGS, type Settings } from '#platform';
import { BearerAuthGuard } from './http-auth.js';
import { TokenVerifier, tokenVerifierFor } from './token-verifier.js';

/** Provides the one `TokenVerifier` (keys parsed once at start) and the HTTP guard over it. */
@Global()
@Module({
  providers: [
    { provide: TokenVerifier, inject: [SETTINGS], useFactory: (settings: Settings) => tokenVerifierFor(settings) },
    BearerAuthGuard,
  ],
  exports: [TokenVerifier, BearerAuthGuard],
})
export class TokenBindingModule {}
