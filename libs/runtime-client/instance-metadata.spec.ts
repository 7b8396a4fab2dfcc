import { describe, expect, it } from '@jest/globals';
import { InstanceMetadata, metadataProblem, type MetadataUpdate } from './instance-metadata.js';

describe('InstanceMetadata', () => {
  it('lays each update over the configured instance; the params are the fields given', () => {
    const metadata = new InstanceMetadata({ address: '10.0.0.1', port: 9000, version: '1.0.0', tags: { a: '1' } });
    expect(metadata.apply({ version: '1.0.1' })).toEqual({ version: '1.0.1' });
    expect(metadata.apply({ port: 9001, tags: { b: '2' } })).toEqual({ port: 9001, tags: { b: '2' } });
    expect(metadata.current).toEqual({ address: '10.0.0.1', port: 9001, version: '1.0.1', tags: { b: '2' } });
  });

  it.each<[string, unknown]>([
    ['port 0', { port: 0 }],
    ['a port above 65535', { port: 65536 }],
    ['a fractional port', { port: 80.5 }],
    ['a port as text', { port: '80' }],
    ['an unknown protocol', { protocol: 'ftp' }],
    ['a version too long', { version: 'v'.repeat(101) }],
    ['a version with a NUL', { version: '1\u0000' }],
    ['tags an array', { tags: ['a'] }],
    ['a tag value not a string', { tags: { a: 1 } }],
    ['an empty tag key', { tags: { '': 'x' } }],
    ['a tag value with a bell', { tags: { a: '\u0007' } }],
  ])('refuses %s (the controller would drop it unanswered) and keeps the instance', (_name, update) => {
    const metadata = new InstanceMetadata({ port: 9000 });
    expect(metadataProblem(update as MetadataUpdate)).toEqual(expect.any(String));
    expect(() => metadata.apply(update as MetadataUpdate)).toThrow(TypeError);
    expect(metadata.current).toEqual({ port: 9000 });
  });

  it('takes tab and line breaks in tag values, as the controller does', () => {
    expect(metadataProblem({ tags: { note: 'a\tb\nc' } })).toBeUndefined();
  });

  it('restates every update so far for the re-send after a reconnect, and nothing before the first', () => {
    const metadata = new InstanceMetadata({ port: 9000, version: '1.0.0' });
    expect(metadata.updates).toBeUndefined();
    metadata.apply({ version: '1.0.1' });
    metadata.apply({ tags: { zone: 'b' } });
    metadata.apply({ version: '1.0.2' });
    expect(metadata.updates).toEqual({ version: '1.0.2', tags: { zone: 'b' } });
  });
});
