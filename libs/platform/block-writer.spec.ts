import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { BlockWriter } from './block-writer.js';

/** A fake write(2): records what reached the "file", with scripted short writes and errors. */
function fakeFd(script: (call: number, length: number) => number | string = (_, length) => length) {
  const written: Buffer[] = [];
  let calls = 0;
  const write = (_fd: number, buffer: Buffer, offset: number): number => {
    const outcome = script(calls++, buffer.length - offset);
    if (typeof outcome === 'string') throw Object.assign(new Error(outcome), { code: outcome });
    // A copy, as write(2) takes the bytes: the writer reuses its buffer.
    written.push(Buffer.from(buffer.subarray(offset, offset + outcome)));
    return outcome;
  };
  return { write, text: () => Buffer.concat(written).toString('utf8'), calls: () => calls };
}

describe('BlockWriter', () => {
  it('holds lines until a block is full, then writes them in order with one call', () => {
    const fd = fakeFd();
    const writer = new BlockWriter(1, { blockSize: 10, write: fd.write });
    writer.write('abcd\n');
    expect(fd.calls()).toBe(0);
    writer.write('efgh\n');
    expect(fd.calls()).toBe(1);
    expect(fd.text()).toBe('abcd\nefgh\n');
  });

  it('writes what is pending on flushSync, and nothing when nothing is', () => {
    const fd = fakeFd();
    const writer = new BlockWriter(1, { write: fd.write });
    writer.flushSync();
    expect(fd.calls()).toBe(0);
    writer.write('{"msg":"één ✓"}\n');
    writer.flushSync();
    expect(fd.text()).toBe('{"msg":"één ✓"}\n');
  });

  it('finishes a short write, and waits out a full pipe (EAGAIN) without losing a byte', () => {
    // 3 bytes, then EAGAIN twice, then the rest: a multi-byte character is split across the calls.
    const fd = fakeFd((call, length) => (call === 0 ? 3 : call <= 2 ? 'EAGAIN' : length));
    const writer = new BlockWriter(1, { write: fd.write });
    writer.write('ab✓cd\n');
    writer.flushSync();
    expect(fd.calls()).toBe(4);
    expect(fd.text()).toBe('ab✓cd\n');
  });

  it('drops the block on any other error (EPIPE) and goes on with the next', () => {
    const fd = fakeFd((call, length) => (call === 0 ? 'EPIPE' : length));
    const writer = new BlockWriter(1, { write: fd.write });
    writer.write('lost\n');
    expect(() => writer.flushSync()).not.toThrow();
    writer.write('kept\n');
    writer.flushSync();
    expect(fd.text()).toBe('kept\n');
  });

  it('writes every line whole and in order, whatever their lengths, characters and the short writes (property)', () => {
    // fast-check prints the seed of a failing run.
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string({ unit: 'grapheme' }), fc.string({ minLength: 3000, maxLength: 9000 })), {
          maxLength: 30,
        }),
        fc.integer({ min: 1, max: 8192 }),
        fc.array(fc.integer({ min: 1, max: 5000 }), { minLength: 1 }),
        (lines, blockSize, shortWrites) => {
          const fd = fakeFd((call, length) => Math.min(length, shortWrites[call % shortWrites.length] ?? length));
          const writer = new BlockWriter(1, { blockSize, write: fd.write });
          for (const line of lines) writer.write(`${line}\n`);
          writer.flushSync();
          expect(fd.text()).toBe(lines.map((line) => `${line}\n`).join(''));
        },
      ),
      { numRuns: 200 },
    );
  });
});
