import { describe, expect, it } from '@jest/globals';
import { sortedRecord } from './sorted.js';

describe('sortedRecord', () => {
  it('orders keys by code unit and keeps every name an own key, __proto__ included', () => {
    const record = sortedRecord<number>([
      ['b.x', 1],
      ['__proto__', 2],
      ['B.x', 3],
      ['a.x', 4],
    ]);
    expect(Object.keys(record)).toEqual(['B.x', '__proto__', 'a.x', 'b.x']);
    expect(Object.getPrototypeOf(record)).toBe(Object.prototype);
    expect(Object.prototype.hasOwnProperty.call(record, '__proto__')).toBe(true);
    expect(JSON.stringify(record)).toBe('{"B.x":3,"__proto__":2,"a.x":4,"b.x":1}');
  });
});
