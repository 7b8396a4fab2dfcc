import { ChangeEvent } from './change-event.entity.js';
import { ConfigDataKey } from './config-data-key.entity.js';
import { ConfigEncryption } from './config-encryption.entity.js';
import { ConfigFile } from './config-file.entity.js';
import { ConfigFileContent } from './config-file-content.entity.js';
import { ConfigLayer } from './config-layer.entity.js';
import { ConfigLayerVersion } from './config-layer-version.entity.js';
import { ConfigProperty } from './config-property.entity.js';
import { ControllerLease } from './controller-lease.entity.js';
import { DocumentEntity } from './document.entity.js';
import { EntityTag } from './entity-tag.entity.js';
import { OAuthClient } from './oauth-client.entity.js';
import { ProductEntity } from './product.entity.js';
import { RuntimeInstance } from './runtime-instance.entity.js';
import { SchemaEntity } from './schema.entity.js';
import { Tag } from './tag.entity.js';

export {
  ChangeEvent,
  ConfigDataKey,
  ConfigEncryption,
  ConfigFile,
  ConfigFileContent,
  ConfigLayer,
  ConfigLayerVersion,
  ConfigProperty,
  ControllerLease,
  DocumentEntity,
  EntityTag,
  OAuthClient,
  ProductEntity,
  RuntimeInstance,
  SchemaEntity,
  Tag,
};
export { CHANGE_EVENT_TYPES, type ChangeEventType } from './change-event.entity.js';
export {
  ENTITY_TABLES,
  ENTITY_TYPE_NAMES,
  TAGGABLE_TABLES,
  type EntityTable,
  type EntityTypeName,
} from './entity-tables.js';
export type { FilesByKind, LayerChange } from './config-layer-version.entity.js';
export {
  FILE_KINDS,
  fileValueName,
  type FileKind,
  type JsonValue,
  type LayerAddress,
  type SealedValue,
  type Stored,
} from './config-types.js';
export { TaggableEntity } from './taggable.entity.js';
export { INSTANCE_STATUSES, PROTOCOLS, type InstanceStatus, type Protocol } from './runtime-instance.entity.js';

/** Every table's entity; both apps register all of them, so any repository works in either process. */
export const ENTITIES = [
  Tag,
  EntityTag,
  SchemaEntity,
  ProductEntity,
  DocumentEntity,
  ConfigLayer,
  ConfigProperty,
  ConfigFile,
  ConfigLayerVersion,
  ConfigDataKey,
  ConfigEncryption,
  ConfigFileContent,
  RuntimeInstance,
  ControllerLease,
  OAuthClient,
  ChangeEvent,
] as const;
