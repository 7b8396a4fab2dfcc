import { Injectable, type CanActivate, type ExecutionContext, type Type } from '@nestjs/common';
import { GUARDS_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import { getMetadataStorage } from 'class-validator';
import { badRequest, type FieldError, type ProblemException } from './problem.js';
import { allowsLineBreaks, hasControlChars, trimmedLikeTheBinding } from './validators.js';

/**
 * The request target's query and path parameters, checked once for every route of both processes
 * (DESIGN 3): the query string's percent-encoding before anything else, control characters after the
 * guards (validation comes after 401 and 403), so no query DTO or path id needs a rule of its own.
 */

/** The `field` of an error about a query parameter whose name an answer does not show (DESIGN 3). */
export const UNNAMED_PARAMETER = '(query)';

/**
 * A query parameter's name as an error answer may show it before routing, when the route's own names are
 * not known: a plain name (letters, digits, `_ . -`, at most 64), never raw, undecodable or odd input.
 */
function plainName(name: string): string | undefined {
  return /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/.test(name) ? name : undefined;
}

/** The query parameter names a DTO declares (what `forbidNonWhitelisted` accepts): safe to show in errors. */
export function declaredQueryNames(dto: Type<unknown> | undefined): ReadonlySet<string> {
  if (dto === undefined) return new Set();
  return new Set(
    getMetadataStorage()
      .getTargetValidationMetadatas(dto, '', true, false)
      .map((m) => m.propertyName),
  );
}

/** Errors about parameters the route does not declare, without their names (DESIGN 3: no query echoed). */
export function withoutUndeclaredNames(errors: readonly FieldError[], declared: ReadonlySet<string>): FieldError[] {
  const shown: FieldError[] = [];
  let unknown = false;
  for (const error of errors) {
    if (declared.has(error.field.split('.')[0] ?? '')) shown.push(error);
    else unknown = true;
  }
  if (unknown) shown.push({ field: UNNAMED_PARAMETER, message: 'a query parameter this route does not take was sent' });
  return shown;
}

/**
 * 400 when the query string holds a `%` not followed by two hex digits or bytes that are not UTF-8
 * (truncated or overlong sequences), as Fastify answers for the path; Fastify's query parser would
 * otherwise decode them loosely. The parameter is named when its name is plain; its value never is.
 */
export function malformedQuery(url: string): ProblemException | undefined {
  const start = url.indexOf('?');
  if (start === -1) return undefined;
  const query = url.slice(start + 1);
  if (!query.includes('%')) return undefined;
  try {
    decodeURIComponent(query);
    return undefined;
  } catch {
    const errors = new Map<string, FieldError>();
    for (const pair of query.split('&')) {
      const [rawName = '', rawValue = ''] = pair.split(/=(.*)/s);
      if (!decodes(rawName)) {
        const error = { field: UNNAMED_PARAMETER, message: 'a parameter name is not valid percent-encoded UTF-8' };
        errors.set(error.message, error);
      } else if (!decodes(rawValue)) {
        const name = plainName(decodeURIComponent(rawName.replaceAll('+', ' ')));
        const error =
          name === undefined
            ? { field: UNNAMED_PARAMETER, message: 'a parameter value is not valid percent-encoded UTF-8' }
            : { field: name, message: `${name} is not valid percent-encoded UTF-8` };
        errors.set(error.message, error);
      }
    }
    return badRequest('Malformed percent-encoding in the query string', [...errors.values()]);
  }
}

function decodes(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Field errors for control characters in a request's query and path parameters (DESIGN 3). A query
 * parameter is named only when the route declares it (`declared`): no answer echoes the query.
 */
export function controlCharErrors(
  query: unknown,
  params: unknown,
  dto?: Type<unknown>,
  declared: ReadonlySet<string> = declaredQueryNames(dto),
): FieldError[] {
  const errors: FieldError[] = [];
  if (typeof query === 'object' && query !== null) {
    let unnamed = false;
    for (const [name, value] of Object.entries(query)) {
      const values: unknown[] = Array.isArray(value) ? value : [value];
      if (hasControlChars(name)) {
        unnamed = true;
        continue;
      }
      // Names, ids and keywords refuse tab and line breaks too, at their ends as inside (DESIGN 3), but for
      // the config server's address, trimmed of surrounding whitespace like the binding (DESIGN 6.2). Free
      // text keeps them.
      const text = allowsLineBreaks(dto, name);
      const trimmed = !text && trimmedLikeTheBinding(dto, name);
      const refused = (item: string): boolean =>
        hasControlChars(item, text || trimmed) || (trimmed && hasControlChars(item.trim()));
      if (!values.some((item) => typeof item === 'string' && refused(item))) continue;
      if (!declared.has(name)) unnamed = true;
      else {
        errors.push({
          field: name,
          message: text
            ? `${name} must not contain control characters other than tab and line breaks`
            : `${name} must not contain control characters`,
        });
      }
    }
    if (unnamed) {
      errors.push({ field: UNNAMED_PARAMETER, message: 'a query parameter must not contain control characters' });
    }
  }
  if (typeof params === 'object' && params !== null) {
    for (const [name, value] of Object.entries(params)) {
      // Path parameters are ids: no control character at all.
      if (typeof value === 'string' && hasControlChars(value)) {
        errors.push({ field: name, message: `${name} must not contain control characters` });
      }
    }
  }
  return errors;
}

interface RouteArgument {
  readonly index: number;
  readonly data?: unknown;
}

/** What a handler reads of the query: its whole-query DTO (`@Query() q: SomeQuery`) and the names it declares. */
interface QueryShape {
  readonly dto: Type<unknown> | undefined;
  readonly declared: ReadonlySet<string>;
}

function queryShapeOf(controller: Type<unknown>, handler: string): QueryShape {
  const args = Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, handler) as
    Record<string, RouteArgument> | undefined;
  const types = Reflect.getMetadata('design:paramtypes', controller.prototype as object, handler) as
    (Type<unknown> | undefined)[] | undefined;
  let dto: Type<unknown> | undefined;
  const single: string[] = [];
  for (const [key, arg] of Object.entries(args ?? {})) {
    if (key.split(':')[0] !== String(RouteParamtypes.QUERY)) continue;
    if (arg.data === undefined) dto = types?.[arg.index];
    else if (typeof arg.data === 'string') single.push(arg.data);
  }
  return { dto, declared: new Set([...declaredQueryNames(dto), ...single]) };
}

interface RequestParts {
  readonly query?: unknown;
  readonly params?: unknown;
}

/** Handler -> what it reads of the query, looked up once per route. */
const SHAPES = new WeakMap<object, QueryShape>();

/** 400 naming every query or path parameter of the request that holds control characters (DESIGN 3). */
function refuseControlChars(context: ExecutionContext): void {
  const request = context.switchToHttp().getRequest<RequestParts>();
  const handler = context.getHandler();
  let shape = SHAPES.get(handler);
  if (shape === undefined) {
    shape = queryShapeOf(context.getClass(), handler.name);
    SHAPES.set(handler, shape);
  }
  const errors = controlCharErrors(request.query, request.params, shape.dto, shape.declared);
  if (errors.length > 0) throw badRequest(errors.map((error) => error.message).join('; '), errors);
}

/**
 * Refuses control characters in any query parameter and every path parameter (DESIGN 3) with 400 naming
 * them, after the route's other guards (401 and 403 come first) and before pipes, handlers and SQL. Routes
 * with guards list it last (`@Authenticated` does); `GlobalControlCharsGuard` covers the routes without.
 * A guard, not an interceptor: an interceptor wraps every handler in RxJS, about 8 % of a read's CPU.
 */
@Injectable()
export class ControlCharsGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.getType() === 'http') refuseControlChars(context);
    return true;
  }
}

/** Per handler: whether the route has guards of its own (so its last guard is the check). */
const OWN_GUARDS = new WeakMap<object, boolean>();

/**
 * The check on routes without guards of their own, as a global guard (global guards run first, so on a
 * guarded route it leaves the check to the route's last guard). A guarded route whose last guard is not
 * `ControlCharsGuard` is a wiring fault: every call to it fails (500) rather than skip the check.
 */
export class GlobalControlCharsGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const handler = context.getHandler();
    let guarded = OWN_GUARDS.get(handler);
    if (guarded === undefined) {
      guarded = ownGuardsOf(context.getClass(), handler);
      OWN_GUARDS.set(handler, guarded);
    }
    if (!guarded) refuseControlChars(context);
    return true;
  }
}

/** Whether the route has guards of its own; throws when the last of them is not `ControlCharsGuard`. */
function ownGuardsOf(controller: Type<unknown>, handler: object): boolean {
  const guards = [
    ...((Reflect.getMetadata(GUARDS_METADATA, controller) as unknown[] | undefined) ?? []),
    ...((Reflect.getMetadata(GUARDS_METADATA, handler) as unknown[] | undefined) ?? []),
  ];
  if (guards.length === 0) return false;
  if (guards.at(-1) !== ControlCharsGuard) {
    throw new Error(`${controller.name}: a guarded route must list ControlCharsGuard as its last guard`);
  }
  return true;
}
