import { ValidationPipe, type PipeTransform, type Type } from '@nestjs/common';
import { flattenValidationErrors, type FieldError } from '#platform';
import { JSONRPC_ERRORS, JsonRpcError } from './jsonrpc.js';

export type ParamError = FieldError;

export function invalidParams(errors: readonly ParamError[]): JsonRpcError {
  return new JsonRpcError(JSONRPC_ERRORS.invalidParams.code, JSONRPC_ERRORS.invalidParams.message, {
    status: 400,
    errors,
  });
}

/**
 * Validates JSON-RPC params into their DTO: failures are -32602 with every failing field in `data.errors`.
 * Unknown params are dropped, not refused: upstream clients send extra fields, and a host-like field in
 * `service/register` must be ignored (DESIGN 6.3).
 */
export function jsonRpcValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: false,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    validationError: { target: false, value: true },
    exceptionFactory: (errors) => invalidParams(flattenValidationErrors(errors)),
  });
}

const paramsPipe = jsonRpcValidationPipe();

/**
 * `@MessageBody('params', new JsonRpcParams(Dto)) params: Readonly<Dto>`: validates params into `Dto`. The
 * parameter is typed `Readonly<Dto>` so its design type is `Object` and the app's global HTTP pipe
 * (which refuses unknown fields with problem+json) leaves JSON-RPC params to this one.
 */
export class JsonRpcParams<T extends object> implements PipeTransform<unknown, Promise<T>> {
  constructor(private readonly dto: Type<T>) {}

  async transform(value: unknown): Promise<T> {
    // By-position params are valid JSON-RPC but no method here takes them; decided after the token guards.
    if (Array.isArray(value)) throw invalidParams([{ field: 'params', message: 'params must be an object (by-name)' }]);
    return (await paramsPipe.transform(value, { type: 'body', metatype: this.dto })) as T;
  }
}
