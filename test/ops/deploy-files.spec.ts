import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSettings } from '#platform';
import { describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { composeValidator } from '../support/compose.js';

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  expose?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
}

/** No Docker engine runs here, so the deploy files are checked by parsing them. */
describe('docker-compose.yml', () => {
  const compose = parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true }) as {
    services: Record<string, Service>;
  };
  const { postgres, api, controller, proxy } = compose.services;

  it('has postgres, api, controller and the proxy, each with a health check', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['api', 'controller', 'postgres', 'proxy']);
    for (const service of [postgres, api, controller, proxy]) {
      expect(service?.healthcheck?.test.length).toBeGreaterThan(0);
    }
    expect(api?.healthcheck?.test.join(' ')).toContain('/health/ready');
    expect(controller?.healthcheck?.test.join(' ')).toContain('/health/ready');
  });

  it('runs the built entry points directly; only the proxy publishes the documented ports', () => {
    expect(api?.command).toEqual(['node', 'dist/apps/api/main.js']);
    expect(controller?.command).toEqual(['node', 'dist/apps/controller/main.js']);
    // No published port on the apps: `--scale api=2 --scale controller=2` needs none per replica.
    expect(api?.ports).toBeUndefined();
    expect(controller?.ports).toBeUndefined();
    expect(api?.expose).toEqual(['8080']);
    expect(controller?.expose).toEqual(['8081']);
    expect(proxy?.ports).toEqual(['${API_PORT:-8080}:8080', '${CONTROLLER_PORT:-8081}:8081']);
    expect(proxy?.volumes).toEqual(['./deploy/nginx.conf:/etc/nginx/nginx.conf:ro']);
    expect(proxy?.depends_on?.api?.condition).toBe('service_healthy');
    expect(proxy?.depends_on?.controller?.condition).toBe('service_healthy');
  });

  it('trusts X-Forwarded-For, since the proxy is the only way in', () => {
    for (const service of [api, controller]) expect(service?.environment?.TRUST_PROXY).toBe('true');
  });

  it('starts the apps after a healthy database, and the controller after the api has migrated', () => {
    expect(api?.depends_on?.postgres?.condition).toBe('service_healthy');
    expect(controller?.depends_on?.postgres?.condition).toBe('service_healthy');
    expect(controller?.depends_on?.api?.condition).toBe('service_healthy');
    expect(api?.environment?.RUN_MIGRATIONS).toBe('true');
    expect(api?.environment?.DATABASE_URL).toMatch(/^postgres:\/\/.*@postgres:5432\//);
  });

  it('runs in dev mode by default, which each process announces in a warning line (test/process/dev-mode-warning)', () => {
    for (const service of [api, controller]) expect(loadSettings(resolved(service?.environment)).devMode).toBe(true);
  });

  it("gives both dev-mode processes the api's URL as the issuer, the proxy's default published port (DESIGN 6.5)", () => {
    for (const service of [api, controller]) {
      expect(loadSettings(resolved(service?.environment)).jwt.issuer).toBe('http://localhost:8080');
      // A PUBLIC_BASE_URL in .env (another published port) reaches both, so they still agree.
      expect(service?.environment?.PUBLIC_BASE_URL).toBe('${PUBLIC_BASE_URL:-}');
    }
  });

  it('starts with its own defaults: every setting it passes is one loadSettings accepts', () => {
    for (const service of [api, controller]) {
      expect(() => loadSettings(resolved(service?.environment))).not.toThrow();
    }
  });
});

/** `${VAR:-default}` as compose resolves it with nothing set in the environment. */
function resolved(env: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env ?? {}).map(([name, value]) => [
      name,
      String(value).replace(/\$\{[A-Z_]+:-([^}]*)\}/g, (_, fallback: string) => fallback),
    ]),
  );
}

/** docker-compose.issuer.yml layered on docker-compose.yml: compose merges each service's environment by key. */
describe('docker-compose.issuer.yml', () => {
  const base = parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true }) as {
    services: Record<string, Service>;
  };
  const layer = parse(readFileSync('docker-compose.issuer.yml', 'utf8'), { merge: true }) as {
    services: Record<string, Service & { secrets?: string[] }>;
    secrets: Record<string, { file: string }>;
  };
  const merged = (name: string): Record<string, string> =>
    resolved({ ...base.services[name]?.environment, ...layer.services[name]?.environment });

  it("gives the api the issuer key and the controller the api's JWKS, with one issuer for both", () => {
    const apiSettings = loadSettings(merged('api'));
    const controllerSettings = loadSettings(merged('controller'));
    expect(apiSettings.devMode).toBe(false);
    expect(apiSettings.tokenIssuer.keyFile).toBe('/run/secrets/token-issuer-key');
    expect(apiSettings.jwt.jwksUri).toBeUndefined();
    expect(controllerSettings.devMode).toBe(false);
    expect(controllerSettings.tokenIssuer.keyFile).toBeUndefined();
    // The api's port inside the compose network and the path the issuer publishes (DESIGN 10).
    expect(controllerSettings.jwt.jwksUri).toBe(`http://api:${apiSettings.apiPort}/.well-known/jwks.json`);
    expect(controllerSettings.jwt.issuer).toBe(apiSettings.jwt.issuer);
  });

  it('mounts the private key and the config key ring into the api only (production needs the ring, DESIGN 17)', () => {
    expect(layer.services.api?.secrets).toEqual(['token-issuer-key', 'config-keyring']);
    expect(layer.services.api?.environment?.CONFIG_KEYRING_FILE).toBe('/run/secrets/config-keyring');
    expect(layer.services.controller?.secrets).toBeUndefined();
    expect(layer.secrets['token-issuer-key']?.file).toBe('${TOKEN_ISSUER_KEY_PATH:-./issuer.pem}');
    expect(layer.secrets['config-keyring']?.file).toBe('${CONFIG_KEYRING_PATH:-./config-keyring}');
  });
});

describe('docker compose config', () => {
  const validator = composeValidator();
  const runIt = validator !== undefined || process.env.CI === 'true' ? it : it.skip;

  runIt('accepts the file', () => {
    expect(validator).toBeDefined();
    const [command, ...args] = validator!;
    expect(() =>
      execFileSync(command, [...args, '-f', 'docker-compose.yml', 'config', '-q'], { stdio: 'pipe' }),
    ).not.toThrow();
  });

  runIt('accepts the issuer layer on top of it', () => {
    const [command, ...args] = validator!;
    const files = ['-f', 'docker-compose.yml', '-f', 'docker-compose.issuer.yml'];
    const output = execFileSync(command, [...args, ...files, 'config'], { stdio: 'pipe' }).toString('utf8');
    const config = parse(output) as { services: Record<string, Service> };
    expect(config.services.controller?.environment?.JWT_JWKS_URI).toBe('http://api:8080/.well-known/jwks.json');
    expect(config.services.api?.environment?.TOKEN_ISSUER_KEY_FILE).toBe('/run/secrets/token-issuer-key');
  });
});

describe('deploy/nginx.conf', () => {
  const conf = readFileSync('deploy/nginx.conf', 'utf8');

  it('resolves replicas through Docker DNS per request and upgrades WebSockets', () => {
    expect(conf).toContain('resolver 127.0.0.11');
    // A variable in proxy_pass makes nginx resolve at request time, so scaled and restarted replicas are found.
    expect(conf).toMatch(/set \$api http:\/\/api:8080;\s+proxy_pass \$api;/);
    expect(conf).toMatch(/set \$controller http:\/\/controller:8081;\s+proxy_pass \$controller;/);
    expect(conf).toContain('proxy_set_header Upgrade $http_upgrade;');
    expect(conf).toContain('proxy_set_header Connection $connection_upgrade;');
    // Each location sets its headers itself (nginx inherits none into a location that sets any).
    expect(conf.match(/proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;/g)).toHaveLength(2);
  });

  it('routes no /metrics on either port: Prometheus scrapes each process directly (DESIGN 9)', () => {
    const servers = conf.split(/\n {2}server \{/).slice(1);
    expect(servers).toHaveLength(2);
    for (const server of servers) {
      // Before the catch-all, as a `^~` prefix: no regex location can win, and /metrics/… is covered too.
      expect(server).toMatch(/location \^~ \/metrics \{[^}]*return 404 [^}]*\}[\s\S]*location \/ \{/);
    }
    expect(conf).toMatch(/Prometheus scrapes each process directly on the internal network/);
  });

  const nginx = spawnSync('nginx', ['-v']).status === 0;
  (nginx || process.env.CI === 'true' ? it : it.skip)(
    'passes nginx -t (Debian nginx-light, installed by .ci/run)',
    () => {
      const result = spawnSync('nginx', ['-t', '-c', join(process.cwd(), 'deploy/nginx.conf'), '-p', tmpdir()], {
        encoding: 'utf8',
      });
      expect(result.stderr).toContain('test is successful');
    },
  );
});

describe('Dockerfile', () => {
  const text = readFileSync('Dockerfile', 'utf8');

  it('builds in a separate stage and runs as a non-root user with node directly', () => {
    expect(text.match(/^FROM /gm)).toHaveLength(2);
    expect(text).toMatch(/^USER node$/m);
    expect(text).toMatch(/^CMD \["node", "dist\/apps\/api\/main\.js"\]$/m);
    expect(text).toContain('npm prune --omit=dev --omit=optional');
  });

  it('runs on a supported Node LTS (24 or 26), never the end-of-life 20', () => {
    const images = [...text.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    expect(images).toHaveLength(2);
    for (const image of images) expect(image).toMatch(/^node:(24|26)(-|$)/);
  });
});

describe('docs/design.md', () => {
  it('is the design card contract, unchanged (comments cite its sections as DESIGN n)', () => {
    const card = join('..', 'shared', 'DESIGN.md');
    const copy = readFileSync('docs/design.md', 'utf8');
    expect(copy).toContain('# Bindery: design and public contract');
    // CI and sessions have the card beside the checkout; a bare clone checks only the copy's presence.
    if (existsSync(card)) expect(copy).toBe(readFileSync(card, 'utf8'));
  });
});
