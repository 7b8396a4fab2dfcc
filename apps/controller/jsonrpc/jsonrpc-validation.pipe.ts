import {
  ValidationPipe,
  type PipeTransform,
  type Type,
  type ValidationError,
  type ValidationPipeOptions,
} from '@nestjs/common';
import type { ValidatorOptions } from 'class-validator';
import { flattenValidationErrors, holdsPrototypeKey, opaqueJsonFields, type FieldError } from '#platform';
import { JSONRPC_ERRORS, JsonRpcError } from './jsonrpc.js';

export type ParamError = FieldError;

export function invalidParams(errors: readonly ParamError[]): JsonRpcError {
  return new JsonRpcError(JSONRPC_ERRORS.invalidParams.code, JSONRPC_ERRORS.invalidParams.message, {
    status: 400,
    errors,
  });
}

const PARAMS_PIPE_OPTIONS: ValidationPipeOptions = {
  whitelist: true,
  forbidNonWhitelisted: false,
  transform: true,
  transformOptions: { enableImplicitConversion: false },
  validationError: { target: false, value: true },
  exceptionFactory: (errors) => invalidParams(flattenValidationErrors(errors)),
};

/**
 * Validates JSON-RPC params into their DTO: failures are -32602 with every failing field in `data.errors`.
 * Unknown params are dropped, not refused: upstream clients send extra fields, and a host-like field in
 * `service/register` must be ignored (DESIGN 6.3).
 */
export function jsonRpcValidationPipe(): ValidationPipe {
  return new ValidationPipe(PARAMS_PIPE_OPTIONS);
}

const paramsPipe = jsonRpcValidationPipe();

/**
 * The params pipe of one call whose `@OpaqueJson()` fields hold a `__proto__`, `constructor` or `prototype`
 * key: Nest transforms params with an empty stand-in in their place (it would delete those keys, and
 * class-transformer cannot copy a map holding a `constructor` key), and the values as sent go into the
 * instance in `validate`, Nest's step between class-transformer and class-validator. So one validation checks
 * every field, these values in full by their own rules (a transform of such a field sees only the stand-in).
 * test/controller/tags-prototype-keys.spec.ts fails should a Nest release stop calling `validate` so.
 */
class KeptValuesPipe extends ValidationPipe {
  constructor(private readonly kept: ReadonlyMap<string, unknown>) {
    super(PARAMS_PIPE_OPTIONS);
  }

  protected override validate(
    entity: object,
    options?: ValidatorOptions,
  ): Promise<ValidationError[]> | ValidationError[] {
    for (const [field, value] of this.kept) (entity as Record<string, unknown>)[field] = value;
    return super.validate(entity, options);
  }
}

/**
 * `@MessageBody('params', new JsonRpcParams(Dto)) params: Readonly<Dto>`: validates params into `Dto`. The
 * parameter is typed `Readonly<Dto>` so its design type is `Object` and the app's global HTTP pipe
 * (which refuses unknown fields with problem+json) leaves JSON-RPC params to this one.
 */
export class JsonRpcParams<T extends object> implements PipeTransform<unknown, Promise<T>> {
  /** The DTO's `@OpaqueJson()` fields (`tags`): the runtime's data, kept with every key it sent. */
  private readonly opaque: readonly string[];

  constructor(private readonly dto: Type<T>) {
    this.opaque = opaqueJsonFields(dto);
  }

  async transform(value: unknown): Promise<T> {
    // By-position params are valid JSON-RPC but no method here takes them; decided after the token guards.
    if (Array.isArray(value)) throw invalidParams([{ field: 'params', message: 'params must be an object (by-name)' }]);
    const metadata = { type: 'body', metatype: this.dto } as const;
    const kept = this.keptValues(value);
    if (kept === undefined) return (await paramsPipe.transform(value, metadata)) as T;
    // A copy: Nest deletes prototype keys in place, and the caller's params stay as they came.
    const params = { ...(value as Record<string, unknown>) };
    for (const [field, inner] of kept) params[field] = Array.isArray(inner) ? [] : {};
    return (await new KeptValuesPipe(kept).transform(params, metadata)) as T;
  }

  /** The opaque fields' values holding a prototype key at any depth; undefined (the common case) if none does. */
  private keptValues(value: unknown): Map<string, unknown> | undefined {
    if (this.opaque.length === 0 || typeof value !== 'object' || value === null) return undefined;
    let kept: Map<string, unknown> | undefined;
    for (const field of this.opaque) {
      const inner = (value as Record<string, unknown>)[field];
      if (holdsPrototypeKey(inner)) (kept ??= new Map()).set(field, inner);
    }
    return kept;
  }
}
