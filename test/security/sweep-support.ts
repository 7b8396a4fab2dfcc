import type { JWTPayload } from 'jose';
import type { DataSource } from 'typeorm';
import type { Readable } from 'node:stream';
import type { TestApi } from '../support/api.js';
import type { RouteRecord } from '../support/route-table.js';
import { token } from '../support/tokens.js';

/** A kind of caller of the isolation sweep (DESIGN 16). */
export interface Caller {
  readonly name: string;
  readonly token: string;
}

/** The callers the sweep judges: every one acts within host 1, or without a host and without an admin form. */
export async function hostOneCallers(
  h1: string,
  s1: string,
  h2: string,
  capabilities: readonly string[],
): Promise<Caller[]> {
  const kinds: [string, JWTPayload][] = [
    ['host-1 admin', { sub: 'sweep-a1', scope: 'portal.admin', host: h1 }],
    ['host-1 writer', { sub: 'sweep-w1', scope: 'portal.r portal.w', host: h1 }],
    ['host-1 reader', { sub: 'sweep-r1', scope: 'portal.r', host: h1 }],
    ['host-1 runtime', { sub: 'sweep-rt1', scope: 'portal.r', host: h1, sid: s1, env: 'prod' }],
    ['no host', { sub: 'sweep-n', scope: 'portal.r portal.w' }],
    // A host claim that names no host binds the token to none: never read as absent (a global admin).
    ['admin with a blank host', { sub: 'sweep-ab', scope: 'portal.admin', host: ' ' }],
    ['admin with host 2 in an array', { sub: 'sweep-aa', scope: 'portal.admin', host: [h2] }],
    ...capabilities.map((c): [string, JWTPayload] => [`host-1 ${c}`, { sub: `sweep-${c}`, scope: c, host: h1 }]),
    // Without a host, only capabilities that have no admin form are not global admins.
    ...['tags:read', 'tags:write', 'config:read', 'registry:register', 'registry:discover'].map(
      (c): [string, JWTPayload] => [`no-host ${c}`, { sub: `sweep-n-${c}`, scope: c }],
    ),
  ];
  return Promise.all(kinds.map(async ([name, claims]) => ({ name, token: await token(claims) })));
}

/** One request of the sweep. */
export interface SweepRequest {
  readonly method: string;
  readonly url: string;
  readonly body?: unknown;
  readonly headers: Record<string, string>;
}

/** What came back: status and every byte a client could read (headers and body). */
export interface SweepAnswer {
  readonly status: number;
  readonly text: string;
}

/**
 * Sends `request` through the app's whole stack. Event streams never end, so for them only what is there
 * at once is read (the live part is judged by its own test).
 */
export async function send(api: Pick<TestApi, 'app'>, request: SweepRequest, bearer?: string): Promise<SweepAnswer> {
  const res = await api.app.inject({
    method: request.method as 'GET',
    url: request.url,
    headers: { ...request.headers, ...(bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }) },
    ...(request.body === undefined ? {} : { payload: request.body as Record<string, unknown> }),
    payloadAsStream: true,
  });
  const stream = res.stream();
  const streaming = String(res.headers['content-type'] ?? '').startsWith('text/event-stream');
  const body = streaming ? await firstChunk(stream) : await readAll(stream);
  return { status: res.statusCode, text: `${JSON.stringify(res.headers)}\n${body}` };
}

async function readAll(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

function firstChunk(stream: Readable): Promise<string> {
  return new Promise((resolve, reject) => {
    stream.once('data', (chunk: Buffer) => {
      stream.destroy();
      resolve(chunk.toString('utf8'));
    });
    stream.once('error', reject);
    stream.once('end', () => resolve(''));
  });
}

/** The markers of host 2 that `answer` shows although `request` did not send them. */
export function leaked(markers: readonly string[], request: SweepRequest, answer: SweepAnswer): string[] {
  const sent = `${decodeURIComponent(request.url)} ${JSON.stringify(request.body ?? null)}`;
  return markers.filter((marker) => answer.text.includes(marker) && !sent.includes(marker));
}

/** Values a path parameter takes in the sweep: another host's resource first, then the caller's own. */
export type PathValues = (route: RouteRecord, param: string) => readonly string[];

/** Every URL of `route` with its parameters filled in each way `values` gives, times each query. */
export function urlsOf(route: RouteRecord, values: PathValues, queries: readonly string[]): string[] {
  let paths = [''];
  for (const segment of route.url.split('/').slice(1)) {
    const options = segment.startsWith(':')
      ? values(route, segment.slice(1))
      : segment === '*'
        ? ['index.html']
        : [segment];
    paths = paths.flatMap((path) => options.map((option) => `${path}/${encodeURIComponent(option)}`));
  }
  return paths.flatMap((path) => queries.map((query) => `${path}${query}`));
}

/**
 * Every row of every table of the schema that mentions one of `markers`, as text: the database's view of
 * host 2, compared before and after the sweep (a new table is covered without editing the test).
 */
export async function rowsMentioning(db: DataSource, markers: readonly string[]): Promise<string[]> {
  // The lease is host 2's own controller renewing itself while the sweep runs, not a write by a caller.
  const tables: { table_name: string }[] = await db.query(
    `select table_name from information_schema.tables
      where table_schema = current_schema() and table_type = 'BASE TABLE'
        and table_name not in ('migrations', 'controller_lease')`,
  );
  const rows: string[] = [];
  for (const { table_name: table } of tables) {
    const found: { row: string }[] = await db.query(
      `select t::text as row from "${table}" t where t::text like any ($1::text[]) order by 1`,
      [markers.map((m) => `%${m.replace(/[\\%_]/g, (c) => `\\${c}`)}%`)],
    );
    rows.push(...found.map(({ row }) => `${table}: ${row}`));
  }
  return rows;
}
