import { Logger } from '@nestjs/common';
import type { AppLogger } from '#platform';
import type { BindingWarnLogger } from './binding.js';

/** Logger context of every binding line (rejections, mismatches allowed by the switch, start-up warning). */
export const BINDING_LOG_CONTEXT = 'TokenBinding';

/**
 * A `BindingWarnLogger` writing to the app's logger: through `AppLogger.line` when given it (a rejection's
 * warning), else through Nest's `Logger` (the start-up warning, before the app).
 */
export function bindingLogger(app?: AppLogger): BindingWarnLogger {
  if (app !== undefined) return { warn: (fields, message) => app.line('warn', BINDING_LOG_CONTEXT, fields, message) };
  const logger = new Logger(BINDING_LOG_CONTEXT);
  return { warn: (fields, message) => logger.warn(fields, message) };
}
