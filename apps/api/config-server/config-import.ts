import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { DataSource } from 'typeorm';
import { parse as parseYaml } from 'yaml';
import { ConfigLayerRepository, UnitOfWork } from '#database';
import {
  checkProperties,
  fileNameProblem,
  MAX_FILE_BYTES,
  MAX_FILES_PER_KIND,
  type JsonValue,
} from './config-values.js';
import { changeReason } from './layer-access.js';
import { addressPart, FILE_KINDS, layerAddress, type FileKind, type LayerAddress } from './layer-address.js';
import type { ConfigKeys } from './encryption/config-keys.js';
import { unlessUnchanged } from './layer-history.js';
import { layerWriterFor, type LayerEdit } from './layer-writer.js';

/** The `npm run config:import` command (docs/config-server.md): one layer from a values.yml and/or a folder. */

export const IMPORT_USAGE = `usage: npm run config:import -- --host HOST (--serviceId ID | --productId ID --productVersion V)
         [--envTag ENV] [VALUES_YML] [FILES_DIR] [--kind cert|file] [--reason TEXT]

Replaces one layer's properties with VALUES_YML (flat configName.propertyName keys) and/or its files of
--kind (default file) with the regular files of FILES_DIR (not recursive, dotfiles skipped), in one
transaction that appends the layer's next version (actor config-import, --reason as its reason). Parts
not given are left unchanged. Uses DATABASE_URL, else the embedded PostgreSQL.`;

/** A command-line mistake: printed with the usage, exit code 2. */
export class ImportUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImportUsageError';
  }
}

export interface ImportPlan {
  readonly address: LayerAddress;
  readonly valuesFile: string | undefined;
  readonly filesDir: string | undefined;
  readonly kind: FileKind;
  /** The version's reason (DESIGN 14), as `X-Change-Reason` would give it; null without one. */
  readonly reason: string | null;
}

export interface ImportContents {
  readonly properties: Readonly<Record<string, JsonValue>> | undefined;
  readonly files: ReadonlyMap<string, Buffer> | undefined;
}

const isDirectory = async (path: string): Promise<boolean> => {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    throw new ImportUsageError(`${path}: no such file or directory`);
  }
};

function parseCommandLine(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        host: { type: 'string' },
        serviceId: { type: 'string' },
        productId: { type: 'string' },
        productVersion: { type: 'string' },
        envTag: { type: 'string' },
        kind: { type: 'string' },
        reason: { type: 'string' },
      },
    });
  } catch (error) {
    throw new ImportUsageError((error as Error).message);
  }
}

/** Parses the arguments; a positional that is a directory is the files folder, any other the values file. */
export async function parseImportArgs(argv: readonly string[]): Promise<ImportPlan> {
  const { values, positionals } = parseCommandLine(argv);
  let address: LayerAddress;
  try {
    address = layerAddress({
      host: addressPart('host', values.host),
      serviceId: addressPart('serviceId', values.serviceId),
      productId: addressPart('productId', values.productId),
      productVersion: addressPart('productVersion', values.productVersion),
      envTag: addressPart('envTag', values.envTag),
    });
  } catch (error) {
    throw new ImportUsageError((error as Error).message);
  }
  const kind = values.kind ?? 'file';
  if (!(FILE_KINDS as readonly string[]).includes(kind)) throw new ImportUsageError('--kind must be cert or file');
  let valuesFile: string | undefined;
  let filesDir: string | undefined;
  for (const path of positionals) {
    if (await isDirectory(path)) {
      if (filesDir !== undefined) throw new ImportUsageError('give at most one files folder');
      filesDir = path;
    } else {
      if (valuesFile !== undefined) throw new ImportUsageError('give at most one values file');
      valuesFile = path;
    }
  }
  if (valuesFile === undefined && filesDir === undefined) {
    throw new ImportUsageError('give a values file, a files folder, or both');
  }
  if (values.kind !== undefined && filesDir === undefined) throw new ImportUsageError('--kind needs a files folder');
  let reason: string | null;
  try {
    reason = changeReason(values.reason);
  } catch {
    throw new ImportUsageError('--reason must be at most 200 characters without control characters');
  }
  return { address, valuesFile, filesDir, kind: kind as FileKind, reason };
}

async function readValues(path: string): Promise<Record<string, JsonValue>> {
  let document: unknown;
  try {
    // The core schema keeps YAML 1.2 types only: dates and the like stay strings.
    document = parseYaml(await readFile(path, 'utf8'), { schema: 'core' });
  } catch (error) {
    throw new ImportUsageError(`${path}: ${(error as Error).message}`);
  }
  try {
    // An empty file is an empty layer.
    return checkProperties(document ?? {}, '');
  } catch (error) {
    throw new ImportUsageError(`${path}: ${(error as Error).message}`);
  }
}

async function readFolder(dir: string): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  const names = (await readdir(dir)).filter((name) => !name.startsWith('.')).sort();
  for (const name of names) {
    const path = join(dir, name);
    // stat follows symlinks, as in a mounted Kubernetes secret.
    const info = await stat(path);
    if (!info.isFile()) continue;
    const problem = fileNameProblem(name);
    if (problem !== undefined) throw new ImportUsageError(`${path}: ${problem}`);
    if (info.size > MAX_FILE_BYTES) throw new ImportUsageError(`${path}: larger than ${MAX_FILE_BYTES} bytes`);
    files.set(name, await readFile(path));
  }
  if (files.size > MAX_FILES_PER_KIND) throw new ImportUsageError(`${dir}: more than ${MAX_FILES_PER_KIND} files`);
  return files;
}

/** Reads and checks everything before the database is touched: a bad file changes nothing. */
export async function readImport(plan: ImportPlan): Promise<ImportContents> {
  return {
    properties: plan.valuesFile === undefined ? undefined : await readValues(plan.valuesFile),
    files: plan.filesDir === undefined ? undefined : await readFolder(plan.filesDir),
  };
}

export interface ImportSummary {
  /** The layer already held exactly this: no version was added (DESIGN 14). */
  readonly unchanged: boolean;
  readonly properties: number | undefined;
  readonly files: number | undefined;
}

/** Replaces the given parts of the layer in one transaction, with the layer's next version. */
export async function importLayer(
  dataSource: DataSource,
  plan: ImportPlan,
  contents: ImportContents,
  keys: ConfigKeys,
  maxVersions: number,
): Promise<ImportSummary> {
  const user = 'config-import';
  const writer = layerWriterFor(dataSource, keys, maxVersions);
  const edits: LayerEdit[] = [];
  if (contents.properties !== undefined) edits.push({ properties: contents.properties, mode: 'replace' });
  if (contents.files !== undefined) edits.push({ kind: plan.kind, files: contents.files, mode: 'replace' });
  const unchanged = await unlessUnchanged(
    new UnitOfWork(dataSource).run(async (tx) => {
      const { layerId, previous } = await new ConfigLayerRepository(dataSource)
        .in(tx)
        .upsertVersioned(plan.address, user);
      await writer.write(tx, { layerId, address: plan.address, previous }, edits, { actor: user, reason: plan.reason });
      return false;
    }),
    () => true,
  );
  return {
    unchanged,
    properties: contents.properties === undefined ? undefined : Object.keys(contents.properties).length,
    files: contents.files?.size,
  };
}

export function describeLayer(address: LayerAddress): string {
  return Object.entries(address)
    .filter(([, value]) => value !== null)
    .map(([name, value]) => `${name}=${String(value)}`)
    .join(' ');
}
