import { registerDecorator } from 'class-validator';

export const MAX_TAGS = 100;
export const MAX_TAG_KEY = 128;
export const MAX_TAG_VALUE = 1024;

/** Control characters are refused in identifiers: they would corrupt log lines and lookups. */
export const NO_CONTROL_CHARS = /^[^\p{Cc}]*$/u;

/** Trims strings; other values pass through for the type validators to refuse. */
export const trim = ({ value }: { value: unknown }): unknown => (typeof value === 'string' ? value.trim() : value);

/** Trims strings and turns a blank one into "absent", as the binding rule does (DESIGN 6.2). */
export const trimToUndefined = ({ value }: { value: unknown }): unknown => {
  if (typeof value !== 'string') return value;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
};

function isStringMap(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const entries = Object.entries(value);
  return (
    entries.length <= MAX_TAGS &&
    entries.every(
      ([key, item]) =>
        key.length >= 1 && key.length <= MAX_TAG_KEY && typeof item === 'string' && item.length <= MAX_TAG_VALUE,
    )
  );
}

/** An object of string to string (`tags`), bounded in size. */
export function IsStringMap(): PropertyDecorator {
  return (target: object, property: string | symbol) =>
    registerDecorator({
      name: 'isStringMap',
      target: target.constructor,
      propertyName: property as string,
      options: {
        message: `${String(property)} must be an object of at most ${MAX_TAGS} string values (keys 1..${MAX_TAG_KEY} characters, values up to ${MAX_TAG_VALUE})`,
      },
      validator: { validate: isStringMap },
    });
}
