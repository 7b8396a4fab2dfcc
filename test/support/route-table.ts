import type { NestFastifyApplication } from '@nestjs/platform-fastify';

/** One route as Fastify registered it: the app's own route table, not a list kept by hand. */
export interface RouteRecord {
  readonly method: string;
  readonly url: string;
}

/**
 * Records every route the app registers from now on (call before `init`/`listen`), so sweeps walk what
 * the app really serves. HEAD routes Fastify adds for GET are left out (they answer like GET).
 */
export function recordRoutes(app: NestFastifyApplication): RouteRecord[] {
  const routes: RouteRecord[] = [];
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) {
        if (method !== 'HEAD') routes.push({ method, url: route.url });
      }
    });
  return routes;
}

/** JSON-RPC methods of a gateway: each `@SubscribeMessage` handler's name, read from its metadata. */
export function messageNames(gateway: object): string[] {
  const prototype = Object.getPrototypeOf(gateway) as Record<string, unknown>;
  return Object.getOwnPropertyNames(prototype).flatMap((name) => {
    const handler = prototype[name];
    const message: unknown = typeof handler === 'function' ? Reflect.getMetadata('message', handler) : undefined;
    return typeof message === 'string' ? [message] : [];
  });
}
