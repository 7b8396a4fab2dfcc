import { registerDecorator } from 'class-validator';
import { hasControlChars } from '#platform';

export const MAX_TAGS = 100;
export const MAX_TAG_KEY = 128;
export const MAX_TAG_VALUE = 1024;

function isStringMap(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const entries = Object.entries(value);
  return (
    entries.length <= MAX_TAGS &&
    entries.every(
      ([key, item]) =>
        key.length >= 1 &&
        key.length <= MAX_TAG_KEY &&
        !hasControlChars(key) &&
        typeof item === 'string' &&
        item.length <= MAX_TAG_VALUE &&
        !hasControlChars(item, true),
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
