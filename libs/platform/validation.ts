import { ValidationPipe, type ArgumentMetadata, type Type, type ValidationError } from '@nestjs/common';
import { plainToInstance, Transform } from 'class-transformer';
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

/** How many passing queries a DTO remembers, and how long one may be (as JSON); beyond, each is validated. */
const REMEMBERED_QUERIES = 256;
const REMEMBERED_QUERY_LENGTH = 512;

/**
 * Nest's ValidationPipe, remembering the exact queries that passed, per DTO: the same query (most reads send
 * none, a runtime polls its config with the same one) passes again, so it gets a fresh instance without
 * class-validator's walk, about 4 % of a read's CPU (bench auth, config). The rules are pure functions of the
 * query, so the answer is the same; anything new, long or refused is validated as always. When every field of
 * the result is a scalar, the fresh instance is a copy of the first one's fields, without class-transformer's
 * walk either (about 4 % of the config read's JavaScript); a result holding a list is transformed again.
 */
class EdgeValidationPipe extends ValidationPipe {
  private readonly passed = new WeakMap<Type<unknown>, Map<string, Scalars | undefined>>();

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const dto = metadata.type === 'query' ? metadata.metatype : undefined;
    const key = dto === undefined ? undefined : queryKey(value);
    const known = dto === undefined ? undefined : this.passed.get(dto);
    if (dto !== undefined && key !== undefined && known?.has(key) === true) {
      const fields = known.get(key);
      return fields === undefined
        ? plainToInstance(dto, value, this.transformOptions)
        : Object.assign(new (dto as new () => object)(), fields);
    }
    let result: unknown;
    try {
      result = await super.transform(value, metadata);
    } catch (error) {
      throw dto === undefined ? error : withoutUnknownParameters(error, dto);
    }
    // Remembered only when validation left the query as it came (no key stripped on the way).
    if (dto !== undefined && key !== undefined && queryKey(value) === key) {
      const remembered = known ?? new Map<string, Scalars | undefined>();
      if (remembered.size >= REMEMBERED_QUERIES) remembered.clear();
      remembered.set(key, scalarFields(result));
      this.passed.set(dto, remembered);
    }
    return result;
  }
}

/** A refused query without the names of parameters the DTO does not declare (DESIGN 3: no query echoed). */
function withoutUnknownParameters(error: unknown, dto: Type<unknown>): unknown {
  if (!(error instanceof ProblemException) || error.extras.errors === undefined) return error;
  const errors = withoutUndeclaredNames(error.extras.errors, declaredQueryNames(dto));
  return badRequest(errors.map((e) => e.message).join('; '), errors);
}

type Scalars = Readonly<Record<string, string | number | boolean | null | undefined>>;

/** The own fields of a transformed query when all are scalars (safe to share between instances), else undefined. */
function scalarFields(instance: unknown): Scalars | undefined {
  if (typeof instance !== 'object' || instance === null) return undefined;
  const fields: Record<string, string | number | boolean | null | undefined> = {};
  for (const [name, field] of Object.entries(instance)) {
    if (field !== null && typeof field === 'object') return undefined;
    if (typeof field === 'function' || typeof field === 'symbol' || typeof field === 'bigint') return undefined;
    fields[name] = field as string | number | boolean | null | undefined;
  }
  return Object.freeze(fields);
}

/** A query object's identity for remembering it: its JSON, when short; undefined for anything else. */
function queryKey(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const json = JSON.stringify(value);
  return json.length <= REMEMBERED_QUERY_LENGTH ? json : undefined;
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
