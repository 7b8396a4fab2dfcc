import type { SteppedMigration } from './step.js';
import { CreateTag1763700000000 } from './1763700000000-create-tag.js';
import { CreateEntities1763700001000 } from './1763700001000-create-entities.js';
import { CreateConfig1763700002000 } from './1763700002000-create-config.js';
import { CreateRegistry1763700003000 } from './1763700003000-create-registry.js';
import { WidenEntityType1763700004000 } from './1763700004000-widen-entity-type.js';
import { CreateOAuthClient1763700005000 } from './1763700005000-create-oauth-client.js';
import { CreateControllerLease1763700006000 } from './1763700006000-create-controller-lease.js';
import { CreateChangeEvent1763700007000 } from './1763700007000-create-change-event.js';
import { EntityTagHost1763700008000 } from './1763700008000-entity-tag-host.js';
import { ChangeEventNotifyAfterCommit1763700009000 } from './1763700009000-change-event-notify-after-commit.js';
import { ConfigLayerVersion1763700010000 } from './1763700010000-config-layer-version.js';
import { TagCount1763700011000 } from './1763700011000-tag-count.js';
import { ChangeEventTagHosts1763700012000 } from './1763700012000-change-event-tag-hosts.js';
import { ConfigHistory1763700013000 } from './1763700013000-config-history.js';
import { ConfigHistoryAppend1763700013500 } from './1763700013500-config-history-append.js';
import { ConfigHistoryLeanAppend1763700014100 } from './1763700014100-config-history-lean-append.js';
import { ConfigPropertiesReplace1763700015000 } from './1763700015000-config-properties-replace.js';
import { ConfigEncryption1763700016000 } from './1763700016000-config-encryption.js';
import { ConfigLayerDataKey1763700016500 } from './1763700016500-config-layer-data-key.js';
import { KeysetIndexes1763700017000 } from './1763700017000-keyset-indexes.js';
import { TagUsage1763700019000 } from './1763700019000-tag-usage.js';
import { TagDescOrder1763700020000 } from './1763700020000-tag-desc-order.js';
import { ConfigHistoryCount1763700021000 } from './1763700021000-config-history-count.js';
import { OperatorClientCapabilities1763700022000 } from './1763700022000-operator-client-capabilities.js';
import { TagTrigram1763700018000 } from './1763700018000-tag-trigram.js';

/** Every migration, oldest first; add new ones at the end. Each says its step (expand or contract). */
export const migrations: (new () => SteppedMigration)[] = [
  CreateTag1763700000000,
  CreateEntities1763700001000,
  CreateConfig1763700002000,
  CreateRegistry1763700003000,
  WidenEntityType1763700004000,
  CreateOAuthClient1763700005000,
  CreateControllerLease1763700006000,
  CreateChangeEvent1763700007000,
  EntityTagHost1763700008000,
  ChangeEventNotifyAfterCommit1763700009000,
  ConfigLayerVersion1763700010000,
  TagCount1763700011000,
  ChangeEventTagHosts1763700012000,
  ConfigHistory1763700013000,
  ConfigHistoryAppend1763700013500,
  ConfigHistoryLeanAppend1763700014100,
  ConfigPropertiesReplace1763700015000,
  ConfigEncryption1763700016000,
  ConfigLayerDataKey1763700016500,
  KeysetIndexes1763700017000,
  TagTrigram1763700018000,
  TagUsage1763700019000,
  TagDescOrder1763700020000,
  ConfigHistoryCount1763700021000,
  OperatorClientCapabilities1763700022000,
];

export type { MigrationStep, SteppedMigration } from './step.js';
