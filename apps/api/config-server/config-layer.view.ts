import { PageFields } from '#platform';
import { ApiProperty } from '@nestjs/swagger';
import type { JsonValue } from './config-values.js';
import type { LayerSummary } from '#database';
import { FILE_KINDS, type FileKind, type LayerAddress } from './layer-address.js';

/** A layer's address on the wire (DESIGN 7): absent parts are null. Classes only for the OpenAPI document. */
export class LayerAddressView {
  @ApiProperty({ example: 'h1' })
  readonly host!: string;

  @ApiProperty({ type: String, nullable: true, example: 'petstore' })
  readonly serviceId!: string | null;

  @ApiProperty({ type: String, nullable: true, example: null })
  readonly productId!: string | null;

  @ApiProperty({ type: String, nullable: true, example: null })
  readonly productVersion!: string | null;

  @ApiProperty({ type: String, nullable: true, example: 'prod' })
  readonly envTag!: string | null;
}

export class PropertiesLayerView extends LayerAddressView {
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'configName.propertyName to typed value, sorted by key',
    example: { 'server.enableHttps': true, 'server.httpPort': 8443 },
  })
  readonly properties!: Readonly<Record<string, JsonValue>>;
}

export class FilesLayerView extends LayerAddressView {
  @ApiProperty({ enum: FILE_KINDS })
  readonly kind!: FileKind;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string', format: 'byte' },
    description: 'file name to standard base64 content, sorted by name',
  })
  readonly files!: Readonly<Record<string, string>>;
}

function toAddressView(address: LayerAddress): LayerAddressView {
  return {
    host: address.host,
    serviceId: address.serviceId,
    productId: address.productId,
    productVersion: address.productVersion,
    envTag: address.envTag,
  };
}

export function toPropertiesLayerView(
  address: LayerAddress,
  properties: Readonly<Record<string, JsonValue>>,
): PropertiesLayerView {
  return { ...toAddressView(address), properties };
}

export function toFilesLayerView(
  address: LayerAddress,
  kind: FileKind,
  files: ReadonlyMap<string, Buffer>,
): FilesLayerView {
  const encoded: Record<string, string> = {};
  for (const [name, bytes] of files) {
    // defineProperty: a name such as `__proto__` stays an own key.
    Object.defineProperty(encoded, name, {
      value: bytes.toString('base64'),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return { ...toAddressView(address), kind, files: encoded };
}

/** One layer in `GET /config-server/admin/layers`: where it is and how much it holds. */
export class LayerSummaryView extends LayerAddressView {
  @ApiProperty({ type: 'integer', example: 3, description: 'the layer\'s version, as its ETag W/"<n>"' })
  readonly aggregateVersion!: number;

  @ApiProperty({ type: 'integer', example: 12 })
  readonly properties!: number;

  @ApiProperty({ type: 'integer', example: 1 })
  readonly certs!: number;

  @ApiProperty({ type: 'integer', example: 0 })
  readonly files!: number;
}

export class LayerPage extends PageFields {
  @ApiProperty({ type: [LayerSummaryView] })
  readonly layers!: readonly LayerSummaryView[];
}

export function toLayerSummaryView(summary: LayerSummary): LayerSummaryView {
  return {
    ...toAddressView(summary.address),
    aggregateVersion: summary.version,
    properties: summary.properties,
    certs: summary.certs,
    files: summary.files,
  };
}
