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
