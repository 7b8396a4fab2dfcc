import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { ISSUER_DISCOVERY_WARNING, issuerUndiscoverable, SETTINGS, type Settings } from '#platform';

/** Logs once at start when standard clients cannot discover the issuer (DESIGN 10, RFC 8414 section 3.3). */
@Injectable()
export class IssuerDiscoveryWarning implements OnModuleInit {
  private readonly logger = new Logger('TokenIssuer');

  constructor(@Inject(SETTINGS) private readonly settings: Settings) {}

  onModuleInit(): void {
    if (!issuerUndiscoverable(this.settings)) return;
    this.logger.warn(
      { jwtIssuer: this.settings.jwt.issuer, publicBaseUrl: this.settings.publicBaseUrl },
      ISSUER_DISCOVERY_WARNING,
    );
  }
}
