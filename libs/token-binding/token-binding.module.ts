import { Global, Module } from '@nestjs/common';
import { AppLogger, Metrics, SETTINGS, type Settings } from '#platform';
import { BindingEnforcer } from './binding.js';
import { BearerAuthGuard } from './bearer-auth.guard.js';
import { bindingLogger } from './binding-logger.js';
import { JwtStrategy } from './jwt.strategy.js';
import { TokenBindingGuard } from './token-binding.guard.js';
import { UnenforcedBindingWarning } from './unenforced-warning.js';
import { TokenVerifier, tokenVerifierFor } from './token-verifier.js';

/**
 * Provides the one `TokenVerifier` (keys parsed once at start), the one `BindingEnforcer` (the binding
 * rule with ENFORCE_SID_HOST_MATCH, its warning line and its metric) and the HTTP guards over them.
 */
@Global()
@Module({
  providers: [
    { provide: TokenVerifier, inject: [SETTINGS], useFactory: (settings: Settings) => tokenVerifierFor(settings) },
    {
      provide: BindingEnforcer,
      inject: [SETTINGS, Metrics, AppLogger],
      useFactory: (settings: Settings, metrics: Metrics, logger: AppLogger) =>
        new BindingEnforcer(settings.enforceSidHostMatch, bindingLogger(logger), (reason, endpoint) =>
          metrics.bindingRejections.inc({ reason, endpoint }),
        ),
    },
    JwtStrategy,
    BearerAuthGuard,
    TokenBindingGuard,
    // DESIGN 6.4: one start-up warning per process when ENFORCE_SID_HOST_MATCH=false.
    UnenforcedBindingWarning,
  ],
  exports: [TokenVerifier, BindingEnforcer, JwtStrategy, BearerAuthGuard, TokenBindingGuard],
})
export class TokenBindingModule {}
