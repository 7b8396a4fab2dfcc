import 'reflect-metadata';
import type { JWTPayload } from 'jose';
import { loadSettings } from '#platform';
import { ensureDevKey, signDevToken } from '#token-binding';
import { parseCommandLine, refuseUsage, type Command } from './usage.js';

const command = {
  name: 'token',
  usage: `usage: npm run token -- [--sub S] [--client-id C] [--scope "portal.r portal.w"] [--host H] [--sid S] [--env E] [--exp SECONDS]
Prints a token signed with the dev key (dev mode only). Every claim is optional; exp defaults to 3600 s.
Its iss is the api's URL (PUBLIC_BASE_URL, default http://localhost:API_PORT): run it with the API_PORT
(or PUBLIC_BASE_URL, JWT_ISSUER) that npm start was given.`,
  options: {
    sub: { type: 'string' },
    'client-id': { type: 'string' },
    scope: { type: 'string' },
    host: { type: 'string' },
    sid: { type: 'string' },
    env: { type: 'string' },
    exp: { type: 'string' },
  },
} as const satisfies Command;

const { values } = parseCommandLine(command);
const expiresInSec = values.exp === undefined ? 3600 : Number(values.exp);
if (!Number.isInteger(expiresInSec) || expiresInSec <= 0)
  refuseUsage(command, '--exp must be a positive number of seconds');
const settings = loadSettings();
if (!settings.devMode) {
  process.stderr.write('token: only in dev mode (JWT_JWKS_URI and JWT_JWKS_FILE unset); ask your issuer for tokens\n');
  process.exit(1);
}
const claims: JWTPayload = {};
if (values.sub !== undefined) claims.sub = values.sub;
if (values['client-id'] !== undefined) claims.client_id = values['client-id'];
if (values.scope !== undefined) claims.scope = values.scope;
if (values.host !== undefined) claims.host = values.host;
if (values.sid !== undefined) claims.sid = values.sid;
if (values.env !== undefined) claims.env = values.env;
const key = await ensureDevKey(settings.dataDir);
process.stdout.write(`${await signDevToken(key, claims, { ...settings.jwt, expiresInSec })}\n`);
