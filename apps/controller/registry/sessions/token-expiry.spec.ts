import { createSecretKey } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import type { WebSocket } from 'ws';
import { loadSettings } from '#platform';
import { principalOf } from '#token-binding';
import { RegistryConnection } from './connection.js';
import { TokenExpiry } from './token-expiry.js';

const GRACE_MS = 300;
const NOW_SEC = 1_900_000_000;

/** The part of a ws socket the expiry reads: its state and its close. */
function fakeSocket() {
  const socket = { OPEN: 1, readyState: 1, close: jest.fn() };
  return { socket, client: socket as unknown as WebSocket };
}

/** The expiry reads the claims only; the key stands in for the one that verified the token. */
const verified = (token: string, exp?: number) => ({
  token,
  principal: principalOf({ sid: 'svc', ...(exp === undefined ? {} : { exp }) }),
  key: createSecretKey(Buffer.alloc(32)),
});

describe('TokenExpiry', () => {
  const sut = new TokenExpiry(loadSettings({ WS_TOKEN_GRACE_MS: String(GRACE_MS) }));
  beforeEach(() => {
    jest.useFakeTimers({ now: NOW_SEC * 1000 });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it("closes the socket with 1008 once the upgrade token's exp plus the grace has passed", () => {
    const { socket, client } = fakeSocket();
    sut.watch(client, new RegistryConnection(verified('header', NOW_SEC + 1)));
    jest.advanceTimersByTime(1000 + GRACE_MS - 1);
    expect(socket.close).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(socket.close).toHaveBeenCalledWith(1008, 'Token expired');
  });

  it('reads the exp of the token a registration adopted from params.jwt', () => {
    const { socket, client } = fakeSocket();
    const connection = new RegistryConnection(undefined);
    sut.watch(client, connection);
    connection.adopt(verified('params-jwt', NOW_SEC + 2));
    sut.watch(client, connection);
    jest.advanceTimersByTime(2000 + GRACE_MS);
    expect(socket.close).toHaveBeenCalledWith(1008, 'Token expired');
  });

  it('after a refresh, waits for the new token instead', () => {
    const { socket, client } = fakeSocket();
    const connection = new RegistryConnection(verified('old', NOW_SEC + 1));
    sut.watch(client, connection);
    connection.refresh(verified('new', NOW_SEC + 5));
    sut.watch(client, connection);
    jest.advanceTimersByTime(5000 + GRACE_MS - 1);
    expect(socket.close).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(socket.close).toHaveBeenCalledTimes(1);
  });

  it.each([
    ['a socket without a token', undefined],
    ['a token without exp', verified('no-exp')],
  ])('arms nothing for %s', (_, header) => {
    const { socket, client } = fakeSocket();
    sut.watch(client, new RegistryConnection(header));
    jest.advanceTimersByTime(24 * 3600 * 1000);
    expect(socket.close).not.toHaveBeenCalled();
  });

  it('a token valid for longer than setTimeout can wait (24.8 days) closes the socket at its exp, not at once', () => {
    const { socket, client } = fakeSocket();
    const days = 40;
    sut.watch(client, new RegistryConnection(verified('long-lived', NOW_SEC + days * 86_400)));
    jest.advanceTimersByTime(days * 86_400_000 + GRACE_MS - 1);
    expect(socket.close).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(socket.close).toHaveBeenCalledWith(1008, 'Token expired');
  });

  it('a closed socket cancels its deadline', () => {
    const { socket, client } = fakeSocket();
    const connection = new RegistryConnection(verified('header', NOW_SEC + 1));
    sut.watch(client, connection);
    connection.expiry?.cancel();
    jest.advanceTimersByTime(1000 + GRACE_MS);
    expect(socket.close).not.toHaveBeenCalled();
  });
});
