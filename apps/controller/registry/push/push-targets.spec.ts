import { describe, expect, it } from '@jest/globals';
import type { WebSocket } from 'ws';
import type { LayerAddress } from '#database';
import { Connections, RegistryConnection } from '../sessions/connection.js';
import { PushTargets, type ConfigBinding } from './push-targets.js';

const binding = (serviceId: string, envTag: string | null = null, product?: [string, string]): ConfigBinding => ({
  serviceId,
  envTag,
  productId: product?.[0] ?? null,
  productVersion: product?.[1] ?? null,
});

const layer = (parts: Partial<LayerAddress>): LayerAddress => ({
  host: 'h',
  serviceId: null,
  productId: null,
  productVersion: null,
  envTag: null,
  ...parts,
});

/** The owners `layer` reaches, each with the serviceId and envTag its frame would name. */
const reached = <S>(index: PushTargets<S>, at: LayerAddress): [S, string, string | null][] =>
  [...index.targets(at)].map(([owner, b]) => [owner, b.serviceId, b.envTag]);

describe('PushTargets (the index of push targets)', () => {
  it('finds the owners a layer feeds by service or product, all-env or their env, one entry per owner', () => {
    const index = new PushTargets<string>();
    index.hold('A', 'i1', binding('svc', 'prod'));
    index.hold('A', 'i2', binding('svc', 'prod'));
    index.hold('B', 'i3', binding('svc', 'dev'));
    index.hold('C', 'i4', binding('svc'));
    index.hold('D', 'i5', binding('other', 'prod', ['shop', '1']));
    index.hold('E', 'i6', binding('other', 'prod', ['shop', '2']));

    expect(reached(index, layer({ serviceId: 'svc', envTag: 'prod' }))).toEqual([['A', 'svc', 'prod']]);
    expect(reached(index, layer({ serviceId: 'svc' })).map(([owner]) => owner)).toEqual(['A', 'B', 'C']);
    expect(reached(index, layer({ productId: 'shop', productVersion: '1' }))).toEqual([['D', 'other', 'prod']]);
    expect(reached(index, layer({ productId: 'shop', productVersion: '1', envTag: 'dev' }))).toEqual([]);
    expect(reached(index, layer({ serviceId: 'nobody' }))).toEqual([]);
    expect(index.size).toBe(6);
  });

  it('moves a registration held again by another owner, and answers the owner it left', () => {
    const index = new PushTargets<string>();
    expect(index.hold('A', 'i1', binding('svc'))).toBeUndefined();
    expect(index.hold('A', 'i1', binding('svc'))).toBeUndefined();
    expect(index.hold('B', 'i1', binding('svc'))).toBe('A');
    expect(index.ownerOf('i1')).toBe('B');
    expect(reached(index, layer({ serviceId: 'svc' }))).toEqual([['B', 'svc', null]]);
    // The old owner's release (its close or deregister) leaves the new owner's registration alone.
    expect(index.release('A', 'i1')).toBe(false);
    expect(reached(index, layer({ serviceId: 'svc' }))).toEqual([['B', 'svc', null]]);
    expect(index.release('B', 'i1')).toBe(true);
    expect(reached(index, layer({ serviceId: 'svc' }))).toEqual([]);
    expect(index.size).toBe(0);
  });

  it('re-indexes a registration whose binding changed, leaving nothing under the old keys', () => {
    const index = new PushTargets<string>();
    index.hold('A', 'i1', binding('svc', null, ['shop', '1']));
    index.hold('A', 'i1', binding('svc', null, ['shop', '2']));
    expect(reached(index, layer({ productId: 'shop', productVersion: '1' }))).toEqual([]);
    expect(reached(index, layer({ productId: 'shop', productVersion: '2' }))).toEqual([['A', 'svc', null]]);
    index.release('A', 'i1');
    const keys = index as unknown as { byService: Map<string, unknown>; byProduct: Map<string, unknown> };
    expect([keys.byService.size, keys.byProduct.size]).toEqual([0, 0]);
  });
});

describe('Connections keeps the index in step with registrations and sockets', () => {
  const socket = (): WebSocket => ({}) as unknown as WebSocket;

  it('a registration moved to a new socket leaves the old one; closes and deregistrations release', () => {
    const connections = new Connections();
    const [socketA, socketB] = [socket(), socket()];
    const [a, b] = [new RegistryConnection(undefined), new RegistryConnection(undefined)];
    connections.open(socketA, a);
    connections.open(socketB, b);
    const svc = layer({ serviceId: 'svc' });

    connections.hold(a, 'i1', binding('svc'));
    connections.hold(a, 'i2', binding('svc'));
    connections.hold(b, 'i1', binding('svc'));
    expect([[...a.instances], [...b.instances]]).toEqual([['i2'], ['i1']]);
    expect([...connections.pushTargets.targets(svc).keys()]).toEqual([a, b]);

    // A deregisters its other registration: only B is left for the layer.
    connections.release(a, 'i2');
    expect([...connections.pushTargets.targets(svc).keys()]).toEqual([b]);
    // A's close touches nothing of B's.
    expect(connections.close(socketA)).toBe(a);
    expect([...connections.pushTargets.targets(svc).keys()]).toEqual([b]);
    expect(connections.socketOf(b)).toBe(socketB);
    expect(connections.socketOf(a)).toBeUndefined();
    connections.close(socketB);
    expect(connections.pushTargets.size).toBe(0);
  });

  it('a registration written while its socket closed is held by nobody, not even the socket it left', () => {
    const connections = new Connections();
    const [socketA, socketB] = [socket(), socket()];
    const [a, b] = [new RegistryConnection(undefined), new RegistryConnection(undefined)];
    connections.open(socketA, a);
    connections.open(socketB, b);
    connections.hold(a, 'i1', binding('svc'));
    connections.close(socketB);
    connections.hold(b, 'i1', binding('svc'));
    expect(a.instances.has('i1')).toBe(false);
    expect(connections.pushTargets.size).toBe(0);
  });
});
