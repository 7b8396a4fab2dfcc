import { describe, expect, it } from '@jest/globals';
import { hasDuplicateNames, InvalidTokenError, screenToken } from './token-rules.js';

const seg = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
const text = (value: string): string => Buffer.from(value).toString('base64url');
const exp = Math.floor(Date.now() / 1000) + 600;
const ALGS = ['RS256', 'ES256', 'PS256'];

describe('screenToken: what jsonwebtoken leaves unchecked', () => {
  it.each<[string, string, string]>([
    ['too long', `${seg({ alg: 'ES256' })}.${text('x'.repeat(9000))}.c2ln`, 'too long'],
    ['two segments', `${seg({ alg: 'ES256' })}.${seg({ exp })}`, 'not a compact JWS'],
    ['empty signature (alg none style)', `${seg({ alg: 'ES256' })}.${seg({ exp })}.`, 'not base64url'],
    ['padding in a segment', `${seg({ alg: 'ES256' })}=.${seg({ exp })}.c2ln`, 'not base64url'],
    ['header not JSON', `${text('{alg')}.${seg({ exp })}.c2ln`, 'header not JSON'],
    ['header an array', `${seg(['ES256'])}.${seg({ exp })}.c2ln`, 'header not an object'],
    ['alg none', `${seg({ alg: 'none' })}.${seg({ exp })}.c2ln`, 'algorithm not allowed'],
    ['alg HS256', `${seg({ alg: 'HS256' })}.${seg({ exp })}.c2ln`, 'algorithm not allowed'],
    ['alg EdDSA', `${seg({ alg: 'EdDSA' })}.${seg({ exp })}.c2ln`, 'algorithm not allowed'],
    ['alg missing', `${seg({ kid: 'k' })}.${seg({ exp })}.c2ln`, 'algorithm not allowed'],
    ['crit', `${seg({ alg: 'ES256', crit: ['x'] })}.${seg({ exp })}.c2ln`, 'crit header'],
    ['crit empty', `${seg({ alg: 'ES256', crit: [] })}.${seg({ exp })}.c2ln`, 'crit header'],
    ['b64 false', `${seg({ alg: 'ES256', b64: false })}.${seg({ exp })}.c2ln`, 'b64 header'],
    ['jku', `${seg({ alg: 'ES256', jku: 'https://x' })}.${seg({ exp })}.c2ln`, 'jku header'],
    ['x5u', `${seg({ alg: 'ES256', x5u: 'https://x' })}.${seg({ exp })}.c2ln`, 'x5u header'],
    ['jwk', `${seg({ alg: 'ES256', jwk: { kty: 'EC' } })}.${seg({ exp })}.c2ln`, 'jwk header'],
    ['x5c', `${seg({ alg: 'ES256', x5c: ['MII'] })}.${seg({ exp })}.c2ln`, 'x5c header'],
    ['kid a number', `${seg({ alg: 'ES256', kid: 7 })}.${seg({ exp })}.c2ln`, 'kid not a string'],
    ['payload a string', `${seg({ alg: 'ES256' })}.${seg('hello')}.c2ln`, 'payload not an object'],
    ['payload null', `${seg({ alg: 'ES256' })}.${seg(null)}.c2ln`, 'payload not an object'],
    ['payload an array', `${seg({ alg: 'ES256' })}.${seg([exp])}.c2ln`, 'payload not an object'],
    ['exp missing', `${seg({ alg: 'ES256' })}.${seg({ sub: 'a' })}.c2ln`, 'exp missing'],
    ['exp a string', `${seg({ alg: 'ES256' })}.${seg({ exp: String(exp) })}.c2ln`, 'exp missing'],
    [
      'duplicate claim',
      `${seg({ alg: 'ES256' })}.${text(`{"exp":${exp},"sub":"a","sub":"b"}`)}.c2ln`,
      'payload has duplicate names',
    ],
    [
      'duplicate header',
      `${text('{"alg":"ES256","kid":"a","kid":"b"}')}.${seg({ exp })}.c2ln`,
      'header has duplicate names',
    ],
  ])('%s is refused', (_, token, reason) => {
    let error: unknown;
    try {
      screenToken(token, ALGS);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidTokenError);
    expect((error as InvalidTokenError).reason).toBe(reason);
  });

  it('passes a plain token and hands back alg, kid and payload', () => {
    const screened = screenToken(`${seg({ alg: 'ES256', kid: 'k', typ: 'JWT' })}.${seg({ exp, sub: 'a' })}.c2ln`, ALGS);
    expect(screened).toEqual({ header: { alg: 'ES256', kid: 'k' }, payload: { exp, sub: 'a' } });
  });
});

describe('hasDuplicateNames', () => {
  it.each<[string, boolean]>([
    ['{"a":1,"b":2}', false],
    ['{"a":1,"a":2}', true],
    ['{"a":1,"\\u0061":2}', true],
    ['{"a":{"a":1},"b":[{"a":1},{"a":2}]}', false],
    ['{"a":{"x":1,"x":2}}', true],
    ['{"a":["a","a"],"s":"\\"a\\":"}', false],
    ['{ "a" : 1 , "a" : 2 }', true],
  ])('%s -> %s', (json, expected) => {
    expect(hasDuplicateNames(json)).toBe(expected);
  });
});
