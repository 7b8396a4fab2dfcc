import { ApiProperty, ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import type { FilesByKind, JsonValue, LayerVersionContent, LayerVersionRecord } from '#database';
import { LayerAddressView } from './config-layer.view.js';
import { isoTime, PageFields } from '#platform';

/** Classes only for the OpenAPI document (DESIGN 14). */

export class LayerChangeView {
  @ApiProperty({
    type: [String],
    description: 'property keys, and cert/<name> or file/<name> for files, that this version added',
    example: ['server.httpPort', 'cert/server.crt'],
  })
  readonly added!: string[];

  @ApiProperty({ type: [String], description: 'names whose value or content changed', example: [] })
  readonly changed!: string[];

  @ApiProperty({ type: [String], description: 'names this version removed', example: [] })
  readonly removed!: string[];

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'SHA-256 (lowercase hex) of each added or changed file, by kind/name; never a value',
  })
  readonly sha256!: Record<string, string>;
}

/** One version in `GET /config-server/admin/history`: names only, never values. */
export class LayerVersionView {
  @ApiProperty({ type: 'integer', minimum: 1, example: 7, description: "the layer's version (its ETag) after it" })
  readonly version!: number;

  @ApiProperty({ format: 'date-time' })
  readonly at!: string;

  @ApiProperty({ type: String, nullable: true, description: "the writer's sub (config:import: its name)" })
  readonly actor!: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'X-Change-Reason of the write, or null' })
  readonly reason!: string | null;

  @ApiProperty({ type: LayerChangeView })
  readonly change!: LayerChangeView;
}

export class LayerHistoryPage extends PageFields {
  @ApiProperty({ type: [LayerVersionView], description: 'newest first' })
  readonly versions!: readonly LayerVersionView[];
}

export class FileHashesView {
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, description: 'name to SHA-256 hex' })
  readonly cert!: Record<string, string>;

  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, description: 'name to SHA-256 hex' })
  readonly file!: Record<string, string>;
}

export class FileContentsView {
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string', format: 'byte' } })
  readonly cert!: Record<string, string>;

  @ApiProperty({ type: 'object', additionalProperties: { type: 'string', format: 'byte' } })
  readonly file!: Record<string, string>;
}

/** `GET /config-server/admin/history/{version}`: that version's whole content. */
export class LayerVersionContentView extends LayerVersionView {
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'the properties after this version' })
  readonly properties!: Record<string, JsonValue>;

  @ApiProperty({ type: FileHashesView })
  readonly files!: FileHashesView;

  @ApiPropertyOptional({ type: FileContentsView, description: 'base64 contents; only with include=files' })
  readonly fileContents?: FileContentsView;
}

/** What a rollback answers (like a PUT): the layer's address and its new version's content. */
export class RolledBackLayerView extends IntersectionType(LayerAddressView, LayerVersionContentView) {}

function toVersionView(record: LayerVersionRecord): LayerVersionView {
  return {
    version: record.version,
    at: isoTime(record.at),
    actor: record.actor,
    reason: record.reason,
    change: record.change,
  };
}

export function toHistoryPage(page: { versions: LayerVersionRecord[] } & PageFields): LayerHistoryPage {
  return { ...page, versions: page.versions.map(toVersionView) };
}

export function toVersionContentView(content: LayerVersionContent): LayerVersionContentView {
  const files: FilesByKind<string> = content.files;
  return {
    ...toVersionView(content),
    properties: content.properties,
    files,
    ...(content.fileContents === undefined ? {} : { fileContents: content.fileContents }),
  };
}
