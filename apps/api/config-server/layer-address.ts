import type { LayerAddress } from '#database';
import { badRequest, hasControlChars, type FieldError } from '#platform';

/** Longest accepted value of each address part (the column widths of migration CreateConfig). */
export const ADDRESS_LIMITS = {
  host: 128,
  serviceId: 128,
  productId: 128,
  productVersion: 64,
  envTag: 64,
} as const;

export type AddressPart = keyof typeof ADDRESS_LIMITS;

/** Where one configuration layer lives (DESIGN 7); absent parts are null. */
export { FILE_KINDS, type FileKind, type LayerAddress } from '#database';

/** What a runtime asks for: a service and/or a product version on a host, optionally for one environment. */
export type ConfigRequest = LayerAddress;

/** The address parts as given: trimmed, blank already turned into undefined by the query DTO. */
export interface AddressInput {
  readonly host?: string;
  readonly serviceId?: string;
  readonly productId?: string;
  readonly productVersion?: string;
  readonly envTag?: string;
}

const fieldError = (field: string, message: string): FieldError => ({ field, message });

function productParts(input: AddressInput, errors: FieldError[]): void {
  if ((input.productId === undefined) !== (input.productVersion === undefined)) {
    const missing = input.productId === undefined ? 'productId' : 'productVersion';
    errors.push(fieldError(missing, 'productId and productVersion must be given together'));
  }
}

function toAddress(input: AddressInput): LayerAddress {
  return {
    host: input.host ?? '',
    serviceId: input.serviceId ?? null,
    productId: input.productId ?? null,
    productVersion: input.productVersion ?? null,
    envTag: input.envTag ?? null,
  };
}

function fail(errors: readonly FieldError[]): never {
  throw badRequest(errors.map((e) => e.message).join('; '), errors);
}

/**
 * A runtime's request (GET configs/certs/files): `serviceId` and/or `productId`+`productVersion`; without
 * `serviceId` it is product-level and needs both product parts.
 */
export function configRequest(input: AddressInput): ConfigRequest {
  const errors: FieldError[] = [];
  if (input.host === undefined) errors.push(fieldError('host', 'host is required'));
  productParts(input, errors);
  if (input.serviceId === undefined && input.productId === undefined && input.productVersion === undefined) {
    errors.push(
      fieldError('serviceId', 'give serviceId, or productId and productVersion for product-level configuration'),
    );
  }
  if (errors.length > 0) fail(errors);
  return toAddress(input);
}

/** One layer (admin endpoints, import): `host`, then exactly one of `serviceId` or `productId`+`productVersion`. */
export function layerAddress(input: AddressInput): LayerAddress {
  const errors: FieldError[] = [];
  if (input.host === undefined) errors.push(fieldError('host', 'host is required'));
  productParts(input, errors);
  const product = input.productId !== undefined || input.productVersion !== undefined;
  if (input.serviceId !== undefined && product) {
    errors.push(fieldError('serviceId', 'a layer belongs to a serviceId or to a productId+productVersion, not both'));
  }
  if (input.serviceId === undefined && !product) {
    errors.push(fieldError('serviceId', 'a layer needs serviceId, or productId and productVersion'));
  }
  if (errors.length > 0) fail(errors);
  return toAddress(input);
}

/**
 * Checks one address part outside HTTP (the import command): trimmed, blank is absent, no control
 * characters, within its column width.
 */
export function addressPart(part: AddressPart, raw: string | undefined): string | undefined {
  const value = raw?.trim();
  if (value === undefined || value === '') return undefined;
  if (hasControlChars(value) || value.length > ADDRESS_LIMITS[part]) {
    throw badRequest(`${part} must be 1..${ADDRESS_LIMITS[part]} characters without control characters`, [
      fieldError(part, `must be 1..${ADDRESS_LIMITS[part]} characters without control characters`),
    ]);
  }
  return value;
}
