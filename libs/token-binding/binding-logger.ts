import { Logger } from '@nestjs/common';
import type { BindingWarnLogger } from './binding.js';

/** Logger context of every binding line (rejections, mismatches allowed by the switch, start-up warning). */
export const BINDING_LOG_CONTEXT = 'TokenBinding';

/** A `BindingWarnLogger` writing through Nest's logger, so lines reach the app's pino stream. */
export function bindingLogger(): BindingWarnLogger {
  const logger = new Logger(BINDING_LOG_CONTEXT);
  return { warn: (fields, message) => logger.warn(fields, message) };
}
