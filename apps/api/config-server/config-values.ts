import { compareKeys, sortedRecord, type JsonValue } from '#database';
import { badRequest, type FieldError } from '#platform';

export { compareKeys, sortedRecord, type JsonValue } from '#database';

/** `configName.propertyName`: a config name without dots, then a property name that may have inner dots. */
export const PROPERTY_KEY = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;
export const MAX_PROPERTY_KEY_LENGTH = 255;
export const MAX_PROPERTIES_PER_LAYER = 2000;

/** A plain file name: no path, no leading dot (and no `..` anywhere, below). */
export const FILE_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;
export const MAX_FILE_NAME_LENGTH = 255;
export const MAX_FILES_PER_KIND = 200;
export const MAX_FILE_BYTES = 1024 * 1024;

/** Standard base64 (RFC 4648 section 4) with padding; whitespace and the URL alphabet are refused. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

const MAX_REPORTED_ERRORS = 20;

function fail(errors: readonly FieldError[]): never {
  const shown = errors.slice(0, MAX_REPORTED_ERRORS);
  throw badRequest(shown.map((e) => `${e.field}: ${e.message}`).join('; '), shown);
}

/** `properties.server.httpPort`, or just the key when the caller names no field (the import command). */
const entryField = (field: string, key: string): string => (field === '' ? key : `${field}.${key}`);

const shortKey = (key: string): string => (key.length > 80 ? `${key.slice(0, 80)}...` : key);

/**
 * Why `value` cannot be stored as jsonb, or undefined when it can: null only inside lists and maps,
 * finite numbers, no NUL characters (PostgreSQL's jsonb refuses them).
 */
function valueProblem(value: unknown, top: boolean, depth = 0): string | undefined {
  if (depth > 32) return 'is nested too deeply';
  if (value === null) return top ? 'must not be null' : undefined;
  switch (typeof value) {
    case 'string':
      return value.includes('\u0000') ? 'must not contain NUL characters' : undefined;
    case 'number':
      return Number.isFinite(value) ? undefined : 'must be a finite number';
    case 'boolean':
      return undefined;
    case 'object': {
      if (Array.isArray(value)) {
        for (const item of value) {
          const problem = valueProblem(item, false, depth + 1);
          if (problem !== undefined) return problem;
        }
        return undefined;
      }
      if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) {
        return 'must be a string, number, boolean, list or map';
      }
      for (const [key, item] of Object.entries(value)) {
        if (key.includes('\u0000')) return 'must not contain NUL characters';
        const problem = valueProblem(item, false, depth + 1);
        if (problem !== undefined) return problem;
      }
      return undefined;
    }
    default:
      return 'must be a string, number, boolean, list or map';
  }
}

/**
 * Checks one layer's properties (admin body or values.yml): every key `configName.propertyName`, every
 * value a non-null JSON value. Returns them sorted by key; a bad entry fails the whole layer with 400.
 */
export function checkProperties(input: unknown, field = 'properties'): Record<string, JsonValue> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    fail([{ field: field === '' ? 'the document' : field, message: 'must be a map of configName.propertyName keys' }]);
  }
  const entries = Object.entries(input as Record<string, unknown>);
  if (entries.length > MAX_PROPERTIES_PER_LAYER) {
    fail([
      {
        field: field === '' ? 'the document' : field,
        message: `must have at most ${MAX_PROPERTIES_PER_LAYER} properties`,
      },
    ]);
  }
  const errors: FieldError[] = [];
  for (const [key, value] of entries) {
    if (key.length > MAX_PROPERTY_KEY_LENGTH || !PROPERTY_KEY.test(key)) {
      errors.push({ field: entryField(field, shortKey(key)), message: 'key must be configName.propertyName' });
      continue;
    }
    const problem = valueProblem(value, true);
    if (problem !== undefined) errors.push({ field: entryField(field, key), message: problem });
  }
  if (errors.length > 0) fail(errors);
  return sortedRecord(entries as [string, JsonValue][]);
}

/** Checks one kind's files: plain names, strict base64 contents of at most MAX_FILE_BYTES. */
export function decodeFiles(input: unknown, field = 'files'): Map<string, Buffer> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    fail([{ field, message: 'must be an object of file name to base64 content' }]);
  }
  const entries = Object.entries(input as Record<string, unknown>);
  if (entries.length > MAX_FILES_PER_KIND) {
    fail([{ field, message: `must have at most ${MAX_FILES_PER_KIND} files` }]);
  }
  const errors: FieldError[] = [];
  const files = new Map<string, Buffer>();
  for (const [name, content] of entries) {
    const nameProblem = fileNameProblem(name);
    if (nameProblem !== undefined) {
      errors.push({ field: entryField(field, shortKey(name)), message: nameProblem });
      continue;
    }
    if (typeof content !== 'string' || !BASE64.test(content)) {
      errors.push({ field: entryField(field, name), message: 'content must be standard base64 with padding' });
      continue;
    }
    const bytes = Buffer.from(content, 'base64');
    if (bytes.length > MAX_FILE_BYTES) {
      errors.push({ field: entryField(field, name), message: `content must be at most ${MAX_FILE_BYTES} bytes` });
      continue;
    }
    files.set(name, bytes);
  }
  if (errors.length > 0) fail(errors);
  return new Map([...files].sort(([a], [b]) => compareKeys(a, b)));
}

export function fileNameProblem(name: string): string | undefined {
  if (name.length > MAX_FILE_NAME_LENGTH || !FILE_NAME.test(name) || name.includes('..')) {
    return 'name must be a plain file name of A-Z, a-z, 0-9, ., _ and - (not starting with a dot, no "..")';
  }
  return undefined;
}
