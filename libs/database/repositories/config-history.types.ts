import type { FilesByKind, LayerChange } from '../entities/config-layer-version.entity.js';
import type { FileKind, JsonValue, LayerAddress } from '../entities/config-types.js';

/** A version as history lists it: who, when, why and which names changed; never values. */
export interface LayerVersionRecord {
  readonly version: number;
  readonly at: Date;
  readonly actor: string | null;
  readonly reason: string | null;
  readonly change: LayerChange;
}

/** A version's whole content (`GET history/{version}`): properties, file hashes, contents when asked for. */
export interface LayerVersionContent extends LayerVersionRecord {
  readonly properties: Record<string, JsonValue>;
  readonly files: FilesByKind<string>;
  /** Base64 contents by kind and name; only when asked for. */
  readonly fileContents?: FilesByKind<string>;
}

/** A version just appended, with the layer's address and its properties now. */
export interface AppendedVersion extends LayerVersionRecord {
  readonly address: LayerAddress;
  readonly properties: Record<string, JsonValue>;
  /**
   * Settles once the controllers were told of this version (after the commit; never when it rolls back):
   * writers answer after it, so whoever saw the answer can count on the notification being on its way.
   */
  readonly announced: Promise<void>;
}

/** A version's content as stored: plaintext columns, or sealed properties and file references (DESIGN 17). */
export type StoredVersionContent =
  | {
      readonly form: 'plain';
      readonly properties: Record<string, JsonValue>;
      readonly files: FilesByKind<string>;
      readonly fileContents: FilesByKind<string> | null;
    }
  | {
      readonly form: 'sealed';
      readonly dataKeyId: string;
      /** Base64 of each sealed value, by key. */
      readonly sealedProperties: Record<string, string>;
      /** The stored content id of each file, by kind and name. */
      readonly fileRefs: FilesByKind<string>;
    };

export interface StoredVersion extends LayerVersionRecord {
  readonly content: StoredVersionContent;
}

/** A sealed write: the change worked out from decrypted content, the version's key and sealed values. */
export interface SealedVersion {
  readonly change: LayerChange;
  /** Every name in the change, sorted. */
  readonly keys: readonly string[];
  /** The version's new data key, wrapped under `kid`. */
  readonly dataKey: { readonly kid: string; readonly wrapped: Buffer };
  /** Every property of the layer now, sealed under that key. */
  readonly properties: readonly (readonly [key: string, sealed: Buffer])[];
  /** Every file of the layer now, as the version keeps it: its stored content by name, by kind. */
  readonly fileRefs: FilesByKind<string>;
  /** The kinds whose file rows are written again, and their files as references to stored contents. */
  readonly files: {
    readonly kinds: readonly FileKind[];
    readonly refs: readonly { readonly kind: FileKind; readonly name: string; readonly contentId: string }[];
  };
}

export interface StoredVersionRow {
  readonly version: number;
  readonly at: Date;
  readonly actor: string | null;
  readonly reason: string | null;
  readonly change: LayerChange;
  readonly properties: Record<string, JsonValue> | null;
  readonly files: FilesByKind<string> | null;
  readonly file_contents: FilesByKind<string> | null;
  readonly data_key_id: string | null;
  readonly sealed_properties: Record<string, string> | null;
  readonly file_refs: FilesByKind<string> | null;
}

export interface AppendedRow {
  readonly version: number;
  readonly at: Date;
  readonly change: LayerChange;
  readonly properties: Record<string, JsonValue>;
  readonly host: string;
  readonly service_id: string | null;
  readonly product_id: string | null;
  readonly product_version: string | null;
  readonly env_tag: string | null;
}
