import { applyDecorators, type Type } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsOptional, IsString, Length, Matches, MaxLength, ValidateBy, ValidateIf } from 'class-validator';
import { ID_PATTERN } from './ids.js';

/**
 * The one set of field validators of both apps (DESIGN 3): names and ids refuse every control character
 * as DESIGN 3 counts them (C0 and DEL; the C1 range is text); free text refuses them too except tab, line
 * feed and carriage return. NUL never reaches PostgreSQL, which would refuse it with an error instead of a 400.
 */

// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
export const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;
// eslint-disable-next-line no-control-regex -- as above, keeping tab, line feed and carriage return
export const CONTROL_CHARS_IN_TEXT = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/** True when `value` holds a control character (`text`: tab, line feed and carriage return allowed). */
export function hasControlChars(value: string, text = false): boolean {
  return (text ? CONTROL_CHARS_IN_TEXT : CONTROL_CHARS).test(value);
}

// eslint-disable-next-line no-control-regex -- whitespace that is not a control character
const SURROUNDING_SPACE = /^[^\S\u0000-\u001f]+|[^\S\u0000-\u001f]+$/g;

/**
 * Drops surrounding whitespace but never a control character: a tab or line break at either end of a name or
 * id is refused like one inside it (DESIGN 3), not trimmed away.
 */
export const trimSpaces = (value: string): string => value.replace(SURROUNDING_SPACE, '');

/**
 * Trims as the binding rule does (DESIGN 6.2, 6.3: surrounding whitespace, tab and line breaks included), for
 * the params it compares (a registration's `serviceId` and `envTag`), so what is stored is what it allowed.
 */
export const trimLikeTheBinding = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' ? value.trim() : value;

/** Trims strings (`trimSpaces`); other values pass through for the type validators to refuse. */
export const trim = ({ value }: { value: unknown }): unknown => (typeof value === 'string' ? trimSpaces(value) : value);

/** Trims strings (`trimSpaces`) and turns a blank one into "absent", as the binding rule does (DESIGN 6.2). */
export const trimToUndefined = ({ value }: { value: unknown }): unknown => {
  if (typeof value !== 'string') return value;
  const trimmed = trimSpaces(value);
  return trimmed === '' ? undefined : trimmed;
};

/** null and omitted both mean "none"; anything else is validated. */
const given = (_: object, value: unknown): boolean => value !== null && value !== undefined;

/** Refuses control characters in a one-line value (names, ids, parameters). */
export const NoControlChars = (): PropertyDecorator =>
  ValidateBy({
    name: 'noControlChars',
    validator: {
      validate: (value: unknown) => typeof value !== 'string' || !hasControlChars(value),
      defaultMessage: () => '$property must not contain control characters',
    },
  });

/** Free-text properties: the query check (request-input.ts) lets tab and line breaks through for these. */
const LINE_BREAKS_ALLOWED = Symbol('lineBreaksAllowed');

/** True when `dto` declares `name` free text with `PlainText()`. */
export function allowsLineBreaks(dto: Type<unknown> | undefined, name: string): boolean {
  return dto !== undefined && Reflect.getMetadata(LINE_BREAKS_ALLOWED, dto.prototype as object, name) === true;
}

const BINDING_TRIMMED = Symbol('bindingTrimmed');

/**
 * Marks a query parameter the binding rule compares (the config server's address, DESIGN 6.2: "both sides are
 * trimmed of surrounding whitespace"): a tab or line break at its ends is trimmed with it, not refused.
 */
export const TrimmedLikeTheBinding = (): PropertyDecorator => (target: object, property: string | symbol) =>
  Reflect.defineMetadata(BINDING_TRIMMED, true, target, property);

/** True when `dto` marks `name` with `TrimmedLikeTheBinding()`. */
export function trimmedLikeTheBinding(dto: Type<unknown> | undefined, name: string): boolean {
  return dto !== undefined && Reflect.getMetadata(BINDING_TRIMMED, dto.prototype as object, name) === true;
}

/** Refuses control characters other than tab, line feed and carriage return (descriptions, bodies, filters). */
export const PlainText = (): PropertyDecorator =>
  applyDecorators(
    (target: object, property: string | symbol) => Reflect.defineMetadata(LINE_BREAKS_ALLOWED, true, target, property),
    ValidateBy({
      name: 'plainText',
      validator: {
        validate: (value: unknown) => typeof value !== 'string' || !hasControlChars(value, true),
        defaultMessage: () => '$property must not contain control characters other than tab and line breaks',
      },
    }),
  );

/** An optional resource id in a body; generated when omitted (DESIGN 4.1, 5.1). */
export const IdField = (): PropertyDecorator =>
  applyDecorators(
    ApiPropertyOptional({
      type: String,
      pattern: ID_PATTERN.source,
      description: 'generated (base64url UUIDv7) when omitted',
    }),
    IsOptional(),
    IsString(),
    Matches(ID_PATTERN, { message: '$property must be 1..22 characters of A-Z, a-z, 0-9, _ and -' }),
  );

/** A required one-line name: trimmed, 1..max characters, no control characters. */
export const NameField = (max: number, description = 'trimmed; no control characters'): PropertyDecorator =>
  applyDecorators(
    ApiProperty({ type: String, minLength: 1, maxLength: max, description }),
    Transform(trim),
    IsString(),
    Length(1, max),
    NoControlChars(),
  );

/** A host id; null or omitted: a global row (DESIGN 4.3). */
export const HostIdField = (description = 'null or omitted: global'): PropertyDecorator =>
  applyDecorators(
    ApiPropertyOptional({ type: String, nullable: true, minLength: 1, maxLength: 22, description }),
    ValidateIf(given),
    IsString(),
    Length(1, 22),
    NoControlChars(),
  );

/** An optional one-line text (versions, types): trimmed, up to max characters. */
export const LineField = (max: number): PropertyDecorator =>
  applyDecorators(
    ApiPropertyOptional({
      type: String,
      nullable: true,
      maxLength: max,
      description: 'trimmed; no control characters',
    }),
    Transform(trim),
    ValidateIf(given),
    IsString(),
    MaxLength(max),
    NoControlChars(),
  );

/** An optional free text (descriptions, bodies): kept as sent, tab and line breaks allowed. */
export const TextField = (max: number): PropertyDecorator =>
  applyDecorators(
    ApiPropertyOptional({
      type: String,
      nullable: true,
      maxLength: max,
      description: 'kept as sent; line breaks allowed',
    }),
    ValidateIf(given),
    IsString(),
    MaxLength(max),
    PlainText(),
  );
