/** A property value as stored (jsonb) and served: string, number, boolean, list or map. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export const FILE_KINDS = ['cert', 'file'] as const;
export type FileKind = (typeof FILE_KINDS)[number];

/** One configuration layer's address (DESIGN 7): a host, then a service or a product version, maybe an env. */
export interface LayerAddress {
  readonly host: string;
  readonly serviceId: string | null;
  readonly productId: string | null;
  readonly productVersion: string | null;
  readonly envTag: string | null;
}

/**
 * A value sealed at rest (DESIGN 17): its bytes, the data key they are sealed under, and what its AAD
 * names (the layer's address and the property key, or `cert/<name>` / `file/<name>`).
 */
export interface SealedValue {
  readonly sealed: Buffer;
  readonly dataKeyId: string;
  readonly address: LayerAddress;
  readonly name: string;
}

/** A property value or file content as stored: plaintext (before `keys:encrypt-existing`) or sealed. */
export type Stored<T> = { readonly plain: T } | SealedValue;

/** The AAD name of a file: its kind and name. */
export const fileValueName = (kind: FileKind, name: string): string => `${kind}/${name}`;
