import { operatorPrincipal } from '#token-binding';
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { validate } from 'class-validator';
import { plainToInstance } from 'class-transformer';
import { DataSource } from 'typeorm';
import { dataSourceOptions, scriptDatabase, OAuthClientRepository, resolveDatabase, runMigrations } from '#database';
import { flattenValidationErrors, loadSettings, ProblemException, SettingsError } from '#platform';
import { ClientsService } from '../apps/api/token-issuer/clients.service.js';
import { CreateClientDto } from '../apps/api/token-issuer/dto/create-client.dto.js';
import { answerHelp } from './usage.js';

const usage = `usage: npm run client:create -- --id ID --scope "portal.r" [--host H --sid S] [--env E ...] [--description TEXT]
Registers a client of the built-in token issuer straight in the database and prints its secret once.
A runtime client needs --host and --sid; an operator client (--scope with portal.admin or an admin
capability: tags:admin, config:admin, clients:admin, registry:read) may have neither.`;

const OPTIONS = {
  id: { type: 'string' },
  scope: { type: 'string' },
  host: { type: 'string' },
  sid: { type: 'string' },
  env: { type: 'string', multiple: true },
  description: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

answerHelp(usage);
let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; strict: true }>>;
try {
  parsed = parseArgs({ options: OPTIONS, strict: true });
} catch (error) {
  process.stderr.write(`client:create: ${(error as Error).message}\n${usage}\n`);
  process.exit(2);
}
const { values } = parsed;
if (values.id === undefined || values.scope === undefined) {
  process.stderr.write(`client:create: --id and --scope are required\n${usage}\n`);
  process.exit(2);
}

// The same validation and rules as POST /oauth2/clients: one DTO, one service.
const body = plainToInstance(CreateClientDto, {
  clientId: values.id,
  scopes: values.scope.split(' ').filter((s) => s !== ''),
  host: values.host,
  sid: values.sid,
  envs: (values.env ?? []).flatMap((e) => e.split(',')).filter((e) => e !== ''),
  description: values.description,
});
const errors = flattenValidationErrors(await validate(body, { whitelist: true, forbidNonWhitelisted: true }));
if (errors.length > 0) {
  process.stderr.write(`client:create: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}\n`);
  process.exit(2);
}

try {
  const settings = loadSettings();
  const database = await resolveDatabase(settings);
  const db = new DataSource(
    dataSourceOptions({
      ...scriptDatabase(settings, database.url),
      poolSize: 2,
      applicationName: 'bindery-client-create',
    }),
  );
  await db.initialize();
  try {
    await runMigrations(db);
    const created = await new ClientsService(new OAuthClientRepository(db)).create(
      operatorPrincipal('client:create'),
      body,
    );
    process.stdout.write(
      `client ${created.clientId} created (scopes: ${created.scopes.join(' ')}${created.host === null ? '' : `, host ${created.host}, sid ${created.sid}`})\n` +
        `client secret (shown once): ${created.clientSecret}\n`,
    );
  } finally {
    await db.destroy();
    await database.stop();
  }
} catch (error) {
  const message = error instanceof SettingsError || error instanceof ProblemException ? error.message : String(error);
  process.stderr.write(`client:create: ${message}\n`);
  process.exit(1);
}
