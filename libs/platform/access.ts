import { Injectable, SetMetadata, type OnApplicationBootstrap } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants.js';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';

/**
 * Capabilities (DESIGN 16): fine-grained scopes a route or JSON-RPC method needs. The broad `portal.*`
 * scopes grant sets of them (libs/token-binding/capabilities.ts).
 */
export const CAPABILITIES = [
  'tags:read',
  'tags:write',
  'tags:admin',
  'config:read',
  'config:admin',
  'registry:register',
  'registry:discover',
  'registry:read',
  'clients:admin',
] as const;

export type Capability = (typeof CAPABILITIES)[number];

/**
 * Where a route's data lies relative to the token's host (DESIGN 16):
 * - `own-host`: the token's host and global data; a token without `host` holding the capability's admin
 *   form is a global admin and sees every host;
 * - `global-admin`: only a token without `host`;
 * - `binding`: the binding rule of DESIGN 6 (host, sid, env claims against the request);
 * - `public`: no token at all.
 */
export type HostRule = 'own-host' | 'global-admin' | 'binding' | 'public';

/** A request value that names a host: the guard refuses another host's before any SQL (403). */
export type HostLocation = { readonly query: string } | { readonly body: string };

/** A route's (or JSON-RPC method's) one declaration of who may call it. */
export interface AccessDeclaration {
  /** `null` only with `public`, or for a method that any verified token may call (an unknown method's -32601). */
  readonly capability: Capability | null;
  readonly hostRule: HostRule;
  /** Request values naming a host, checked against the token's `host` (`own-host` routes). */
  readonly hostIn: readonly HostLocation[];
}

/** Metadata key of a handler's `AccessDeclaration`. */
export const ACCESS = Symbol('access');

/** Sets the declaration; `@Access` (libs/token-binding) adds the guards that apply it. */
export const DeclareAccess = (declaration: AccessDeclaration): MethodDecorator & ClassDecorator =>
  SetMetadata(ACCESS, declaration);

/** A route anyone may call without a token (health, metrics, discovery metadata, console assets). */
export const Public = (): MethodDecorator & ClassDecorator =>
  DeclareAccess({ capability: null, hostRule: 'public', hostIn: [] });

/** The declaration of a handler (method level wins over its class). */
export function accessOf(reflector: Reflector, handler: object, owner: object): AccessDeclaration | undefined {
  return reflector.getAllAndOverride<AccessDeclaration | undefined>(ACCESS, [handler as never, owner as never]);
}

/** Message handlers of `@nestjs/websockets` (`@SubscribeMessage`) carry this metadata key. */
const MESSAGE_METADATA = 'message';

/** One handler that answers requests: an HTTP route or a JSON-RPC method. */
export interface DeclaredHandler {
  readonly owner: string;
  readonly method: string;
  readonly access: AccessDeclaration | undefined;
}

/** Every HTTP route and JSON-RPC method handler of the app, with its declaration (or none). */
export function handlersOf(
  discovery: DiscoveryService,
  scanner: MetadataScanner,
  reflector: Reflector,
): DeclaredHandler[] {
  const found: DeclaredHandler[] = [];
  const seen = new Set<object>();
  const scan = (instance: unknown, isHandler: (handler: object) => boolean): void => {
    if (typeof instance !== 'object' || instance === null || seen.has(instance)) return;
    seen.add(instance);
    const prototype = Object.getPrototypeOf(instance) as Record<string, unknown>;
    for (const name of scanner.getAllMethodNames(prototype)) {
      const handler = prototype[name];
      if (typeof handler !== 'function' || !isHandler(handler)) continue;
      found.push({
        owner: instance.constructor.name,
        method: name,
        access: accessOf(reflector, handler, instance.constructor),
      });
    }
  };
  for (const wrapper of discovery.getControllers())
    scan(wrapper.instance, (h) => Reflect.hasMetadata(PATH_METADATA, h));
  for (const wrapper of discovery.getProviders())
    scan(wrapper.instance, (h) => Reflect.hasMetadata(MESSAGE_METADATA, h));
  return found;
}

/** A handler whose declaration is missing or does not hold together. */
export function declarationFault(handler: DeclaredHandler): string | undefined {
  const { access } = handler;
  if (access === undefined) return 'has no access declaration';
  if (access.hostRule === 'public') return access.capability === null ? undefined : 'is public but names a capability';
  if (access.hostIn.length > 0 && access.hostRule !== 'own-host') return 'names host locations outside own-host';
  return undefined;
}

/**
 * Refuses to start an app with a route or JSON-RPC method that declares no access (DESIGN 16: nothing is
 * allowed by default). Runs once at bootstrap; the guards never read the route table again.
 */
@Injectable()
export class AccessDeclarationCheck implements OnApplicationBootstrap {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onApplicationBootstrap(): void {
    const faults = handlersOf(this.discovery, this.scanner, this.reflector).flatMap((handler) => {
      const fault = declarationFault(handler);
      return fault === undefined ? [] : [`${handler.owner}.${handler.method} ${fault}`];
    });
    if (faults.length > 0) throw new Error(`Access declarations (DESIGN 16): ${faults.join('; ')}`);
  }
}
