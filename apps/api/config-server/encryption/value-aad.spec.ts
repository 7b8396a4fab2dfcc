import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { LayerAddress } from '#database';
import { assertProperty } from '../../../../test/support/property.js';
import { newDataKey, openValue, sealValue, valueAad } from './index.js';
import { decryptError } from '../../../../test/support/decrypt-error.js';

// Characters that break naive encodings (separators, quotes, escapes, NUL, a lone surrogate) plus any text.
const tricky = fc.string({
  unit: fc.constantFrom('a', 'b', '/', ',', '"', '\\', '[', ']', 'null', '\u0000', '\ud800', 'é'),
});
const part = fc.oneof(tricky, fc.string({ unit: 'binary', maxLength: 12 }));
const nullablePart = fc.option(part, { nil: null });
const address: fc.Arbitrary<LayerAddress> = fc.record({
  host: part,
  serviceId: nullablePart,
  productId: nullablePart,
  productVersion: nullablePart,
  envTag: nullablePart,
});
/** The arbitrary under a name the describe block's fixed `address` does not shadow. */
const anyAddress = address;
const name = fc.oneof(
  fc.constantFrom('db.password', 'cert/tls.pem', 'file/tls.pem', 'file/app.yaml'),
  fc.string({ unit: 'binary', maxLength: 12 }),
  tricky,
);

type Input = readonly [host: string, ...rest: (string | null)[]];
const PARTS = ['host', 'serviceId', 'productId', 'productVersion', 'envTag', 'name'] as const;
const asTuple = (a: LayerAddress, n: string): Input => [
  a.host,
  a.serviceId,
  a.productId,
  a.productVersion,
  a.envTag,
  n,
];
const fromTuple = (t: Input): [LayerAddress, string] => [
  { host: t[0], serviceId: t[1], productId: t[2], productVersion: t[3], envTag: t[4] },
  t[5] ?? '',
];

/** A second input near the first: one part null vs '', changed, or text moved across a boundary. */
function neighbour(input: Input, at: number, kind: number, text: string): Input {
  const parts: (string | null)[] = [...input];
  const next = Math.min(at + 1, parts.length - 1);
  const here = parts[at];
  if (kind === 0) parts[at] = here === null ? '' : here === '' && at > 0 && at < 5 ? null : `${here}${text || 'x'}`;
  if (kind === 1) parts[at] = `${text || 'x'}${here ?? ''}`;
  if (kind === 2 && at !== next) {
    // The last character of one part moves to the start of the next: "a","bc" against "ab","c".
    const from = parts[at] ?? '';
    if (from !== '') [parts[at], parts[next]] = [from.slice(0, -1), `${from.slice(-1)}${parts[next] ?? ''}`];
    else parts[at] = text || 'x';
  }
  return [parts[0] ?? '', ...parts.slice(1)];
}

/** Pairs of distinct (address, name): mostly close neighbours, where collisions of an encoding hide. */
const distinctPair = fc
  .oneof(
    fc.tuple(address, name, address, name).map(([a, n, b, m]) => [asTuple(a, n), asTuple(b, m)] as const),
    fc
      .tuple(address, name, fc.nat(PARTS.length - 1), fc.nat(2), part)
      .map(([a, n, at, kind, text]) => [asTuple(a, n), neighbour(asTuple(a, n), at, kind, text)] as const),
  )
  .filter(([x, y]) => x.some((v, i) => v !== y[i]));

const smallBytes = fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b));

describe('valueAad (the layer address and name in the AAD)', () => {
  it('a value sealed for one (address, name) fails to open for any other', async () => {
    await assertProperty(
      'other address or name',
      fc.property(distinctPair, smallBytes, ([x, y], plaintext) => {
        const key = newDataKey();
        const sealed = sealValue(key, plaintext, valueAad(...fromTuple(x)));
        const error = decryptError(() => openValue(key, sealed, valueAad(...fromTuple(y))));
        if (plaintext.length >= 4) expect(error.message).not.toContain(plaintext.toString('utf8'));
        expect(error.message).not.toContain(sealed.toString('base64').slice(0, 12));
      }),
      1000,
    );
  });

  const address: LayerAddress = { host: 'h1', serviceId: 'svc', productId: null, productVersion: null, envTag: 'prod' };

  it('encodes the address and name as JSON of a fixed-order array, null apart from ""', () => {
    expect(valueAad(address, 'db.password')).toBe('["h1","svc",null,null,"prod","db.password"]');
    expect(valueAad({ ...address, envTag: '' }, 'x')).not.toBe(valueAad({ ...address, envTag: null }, 'x'));
    expect(valueAad(address, 'cert/a.pem')).not.toBe(valueAad(address, 'file/a.pem'));
  });

  it('is exactly the JSON of the array, for any parts, however often one address object is used', async () => {
    await assertProperty(
      'aad is JSON of the tuple',
      fc.property(anyAddress, fc.array(name, { minLength: 1, maxLength: 4 }), (a, names) => {
        // The address part is made once per address object: every name of that object must still match.
        for (const n of names) expect(valueAad(a, n)).toBe(JSON.stringify(asTuple(a, n)));
      }),
      300,
    );
  });
});
