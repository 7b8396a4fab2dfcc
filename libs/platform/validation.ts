import { ValidationPipe, type ArgumentMetadata, type Type, type ValidationError } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { registerDecorator } from 'class-validator';
import { badRequest, ProblemException, type FieldError } from './problem.js';
import { declaredQueryNames, withoutUndeclaredNames } from './request-input.js';

/**
 * Every failing field of a class-validator result, nested paths joined with dots. A missing required field
 * and a repeated parameter get one message each, not every rule the absent or doubled value breaks.
 * Needs `validationError.value` (the value is only tested for absence, never rendered).
 */
export function flattenValidationErrors(errors: readonly ValidationError[], prefix = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = prefix === '' ? error.property : `${prefix}.${error.property}`;
    const constraints = error.constraints ?? {};
    const children = flattenValidationErrors(error.children ?? [], field);
    if (constraints.scalar !== undefined) return [{ field, message: constraints.scalar }];
    if (error.value === undefined && Object.keys(constraints).length > 0) {
      return [{ field, message: `${field} is required` }];
    }
    return [...Object.values(constraints).map((message) => ({ field, message })), ...children];
  });
}

/**
 * Nest's ValidationPipe; a refused query leaves out the names of parameters its DTO does not declare
 * (DESIGN 3: no query echoed). The exception factory cannot do it: it is not told the DTO.
 */
class EdgeValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    try {
      return await super.transform(value, metadata);
    } catch (error) {
      const dto = metadata.type === 'query' ? metadata.metatype : undefined;
      throw dto === undefined ? error : withoutUnknownParameters(error, dto);
    }
  }
}

/** A refused query without the names of parameters the DTO does not declare. */
function withoutUnknownParameters(error: unknown, dto: Type<unknown>): unknown {
  if (!(error instanceof ProblemException) || error.extras.errors === undefined) return error;
  const errors = withoutUndeclaredNames(error.extras.errors, declaredQueryNames(dto));
  return badRequest(errors.map((e) => e.message).join('; '), errors);
}

/** Validation at the edge: unknown fields and wrong types are 400 with every failing field named. */
export function validationPipe(): ValidationPipe {
  return new EdgeValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    validationError: { target: false, value: true },
    exceptionFactory: (errors) => {
      const fieldErrors = flattenValidationErrors(errors);
      return badRequest(fieldErrors.map((e) => e.message).join('; '), fieldErrors);
    },
  });
}

/** Stands in for a query parameter given more than once; a string so class-transformer leaves it alone. */
const REPEATED = '\u0000repeated';

/** Parses a query parameter given once as a decimal integer; anything else becomes NaN, which `IsInt` refuses. */
export const toInt = (value: string): number => (/^-?\d{1,10}$/.test(value) ? Number(value) : Number.NaN);

/**
 * A scalar query parameter: `?limit=1&limit=2` is refused with 400 instead of silently picking one.
 * `parse` converts the single raw string (for example `toInt`).
 */
export function Scalar(parse?: (value: string) => unknown): PropertyDecorator {
  const transform = Transform(
    ({ value }: { value: unknown }) => {
      if (Array.isArray(value)) return REPEATED;
      return parse !== undefined && typeof value === 'string' ? parse(value) : value;
    },
    { toClassOnly: true },
  );
  return (target: object, property: string | symbol) => {
    transform(target, property);
    registerDecorator({
      name: 'scalar',
      target: target.constructor,
      propertyName: property as string,
      options: { message: `${String(property)} must not be repeated` },
      validator: { validate: (value: unknown) => value !== REPEATED },
    });
  };
}
