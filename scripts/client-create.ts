import { operatorPrincipal } from '#token-binding';
import 'reflect-metadata';
import { validate } from 'class-validator';
import { plainToInstance } from 'class-transformer';
import { DataSource } from 'typeorm';
import { dataSourceOptions, scriptDatabase, OAuthClientRepository, resolveDatabase, runMigrations } from '#database';
import { flattenValidationErrors, loadSettings, ProblemException, SettingsError } from '#platform';
import { ClientsService } from '../apps/api/token-issuer/clients.service.js';
import { CreateClientDto } from '../apps/api/token-issuer/dto/create-client.dto.js';
import { parseCommandLine, refuseUsage, type Command } from './usage.js';

const command = {
  name: 'client:create',
  usage: `usage: npm run client:create -- --id ID --scope SCOPES [--host H --sid S] [--env E ...] [--description TEXT]
Registers a client of the built-in token issuer straight in the database and prints its secret once.
A runtime client needs --host and --sid; an operator client (--scope with portal.admin or an admin
capability: tags:admin, config:admin, clients:admin, registry:read) may have neither. For example:
  npm run client:create -- --id inventory-prod --scope portal.r --host dev-host --sid inventory --env prod
  npm run client:create -- --id ops --scope "portal.r portal.w portal.admin"`,
  options: {
    id: { type: 'string' },
    scope: { type: 'string' },
    host: { type: 'string' },
    sid: { type: 'string' },
    env: { type: 'string', multiple: true },
    description: { type: 'string' },
  },
} as const satisfies Command;

const { values } = parseCommandLine(command);
if (values.id === undefined || values.scope === undefined) refuseUsage(command, '--id and --scope are required');

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
  // Refused as the api refuses it (400), as the service's own rules are below: no usage error.
  process.stderr.write(`client:create: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}\n`);
  process.exit(1);
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
