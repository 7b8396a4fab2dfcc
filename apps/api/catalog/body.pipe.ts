import type { ArgumentMetadata, PipeTransform, Type } from '@nestjs/common';
import { validationPipe } from '#platform';

/**
 * Validates a body against a DTO class given at runtime. A generic controller's parameter type cannot
 * name the class, so the global pipe sees `Object` and leaves the body to this one (same options).
 */
export class BodyPipe implements PipeTransform<unknown, Promise<unknown>> {
  private readonly pipe = validationPipe();

  constructor(private readonly dto: Type<unknown>) {}

  transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    return this.pipe.transform(value, { ...metadata, metatype: this.dto });
  }
}
