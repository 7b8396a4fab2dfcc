import { generateKeyPairSync, type JsonWebKey, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from './wait.js';

/** An ES256 key pair with its `kid`, usable as `token(..., { key })`. */
export interface SigningKey {
  readonly kid: string;
  readonly alg: 'ES256';
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  readonly jwk: JsonWebKey;
}

export function signingKey(kid: string): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    kid,
    alg: 'ES256',
    privateKey,
    publicKey,
    jwk: { ...publicKey.export({ format: 'jwk' }), kid, alg: 'ES256', use: 'sig' },
  };
}

/**
 * A JWKS endpoint on 127.0.0.1 whose key set a test changes while processes use it. Every path serves the
 * same set; fetches are counted per path, so each process under test can be given a path of its own.
 */
export class JwksServer {
  private keys: readonly SigningKey[];
  private readonly counts = new Map<string, number>();

  private constructor(
    private readonly server: Server,
    keys: readonly SigningKey[],
  ) {
    this.keys = keys;
    server.on('request', (request, response) => {
      const path = request.url ?? '/';
      this.counts.set(path, this.fetches(path) + 1);
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ keys: this.keys.map((k) => k.jwk) }));
    });
  }

  static async start(keys: readonly SigningKey[]): Promise<JwksServer> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new JwksServer(server, keys);
  }

  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  fetches(path: string): number {
    return this.counts.get(path) ?? 0;
  }

  /** From now on the JWKS holds exactly these keys. */
  serve(keys: readonly SigningKey[]): void {
    this.keys = keys;
  }

  /**
   * Resolves once the reader of `path` has applied the current key set: two fetches after now, since a
   * store starts a fetch only when its previous one has finished (and been applied).
   */
  async applied(path: string, timeoutMs = 10_000): Promise<void> {
    const seen = this.fetches(path);
    await waitFor(() => this.fetches(path) >= seen + 2, `two JWKS fetches of ${path}`, timeoutMs);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
