import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { SETTINGS, type Settings } from '#platform';
import type { BindingWarnLogger } from './binding.js';
import { bindingLogger } from './binding-logger.js';

export const UNENFORCED_BINDING_WARNING =
  'ENFORCE_SID_HOST_MATCH=false: token binding enforcement disabled; sid/host/env mismatches are logged and allowed';

/** Logs the start-up warning of DESIGN 6.4 when `ENFORCE_SID_HOST_MATCH=false`; returns whether it did. */
export function warnIfBindingUnenforced(settings: Settings, logger: BindingWarnLogger = bindingLogger()): boolean {
  if (settings.enforceSidHostMatch) return false;
  logger.warn(
    { enforceSidHostMatch: false, allowUnenforcedBinding: settings.allowUnenforcedBinding },
    UNENFORCED_BINDING_WARNING,
  );
  return true;
}

/** Provider that logs the start-up warning once when its module initialises. */
@Injectable()
export class UnenforcedBindingWarning implements OnModuleInit {
  constructor(@Inject(SETTINGS) private readonly settings: Settings) {}

  onModuleInit(): void {
    warnIfBindingUnenforced(this.settings);
  }
}
