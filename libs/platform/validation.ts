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

/** Keys Nest's pipe deletes in place, at any depth, against prototype pollution; a body holding one is refused. */
const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

const OPAQUE_FIELDS = Symbol('opaque JSON fields');

/**
 * A body field whose JSON is kept exactly as sent (config values, file maps, the controller's `tags`): Nest's
 * pipe would silently delete `__proto__`, `constructor` and `prototype` keys inside it, changing what is
 * stored. The HTTP pipe validates an empty stand-in of the same kind and puts the value back, the service
 * checking the value in full; the controller's JSON-RPC pipe validates the value itself by the field's rules.
 * Also applicable after a class's definition (`OpaqueJson()(Dto.prototype, 'field')`).
 */
export function OpaqueJson(): PropertyDecorator {
  return (target: object, property: string | symbol) => {
    const owner = target.constructor;
    const fields = (Reflect.getOwnMetadata(OPAQUE_FIELDS, owner) as string[] | undefined) ?? [];
    Reflect.defineMetadata(OPAQUE_FIELDS, [...fields, String(property)], owner);
  };
}

/** The fields of `dto` (or of a class it extends) marked `@OpaqueJson()`. */
export function opaqueJsonFields(dto: object): readonly string[] {
  return (Reflect.getMetadata(OPAQUE_FIELDS, dto) as string[] | undefined) ?? [];
}

/** Whether `value` holds a key Nest's pipe would delete, at any depth. */
export function holdsPrototypeKey(value: unknown): boolean {
  return prototypeKeyPath(value) !== undefined;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The dotted path of a prototype key in `value`, at any depth; undefined if none. A loop rather than recursion:
 * nesting is bounded only by the body's or frame's size.
 */
function prototypeKeyPath(value: unknown): string | undefined {
  const pending: { readonly value: unknown; readonly path: string }[] = [{ value, path: '' }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (typeof next.value !== 'object' || next.value === null) continue;
    for (const [key, inner] of Object.entries(next.value)) {
      const at = next.path === '' ? key : `${next.path}.${key}`;
      if (PROTOTYPE_KEYS.has(key)) return at;
      pending.push({ value: inner, path: at });
    }
  }
  return undefined;
}

/**
 * Nest's ValidationPipe; a refused query leaves out the names of parameters its DTO does not declare
 * (DESIGN 3: no query echoed). The exception factory cannot do it: it is not told the DTO. A validated body
 * keeps its opaque fields as sent and is refused (400) for a prototype key anywhere else, where Nest would
 * drop it without a word.
 */
class EdgeValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' && isRecord(value) && this.toValidate(metadata)) {
      return this.transformBody(value, metadata);
    }
    try {
      return await super.transform(value, metadata);
    } catch (error) {
      const dto = metadata.type === 'query' ? metadata.metatype : undefined;
      throw dto === undefined ? error : withoutUnknownParameters(error, dto);
    }
  }

  private async transformBody(value: Record<string, unknown>, metadata: ArgumentMetadata): Promise<unknown> {
    const opaque = opaqueJsonFields(metadata.metatype ?? Object);
    // A copy: Nest strips the body in place, and the opaque values must reach the DTO untouched.
    const body = { ...value };
    const kept = new Map<string, object>();
    for (const field of opaque) {
      const inner = body[field];
      if (typeof inner !== 'object' || inner === null) continue;
      kept.set(field, inner);
      body[field] = Array.isArray(inner) ? [] : {};
    }
    const refused = prototypeKeyPath(body);
    if (refused !== undefined) {
      const key = refused.slice(refused.lastIndexOf('.') + 1);
      throw badRequest(`property ${key} should not exist`, [
        { field: refused, message: `property ${key} should not exist` },
      ]);
    }
    const dto = (await super.transform(body, metadata)) as Record<string, unknown>;
    for (const [field, inner] of kept) dto[field] = inner;
    return dto;
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
