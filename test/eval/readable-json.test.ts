// eval.json and compare.json: readable, and the same value as plain JSON.
import { describe, expect, it } from 'vitest';
import { readableJson } from '../../src/util/json.js';

describe('readableJson', () => {
  it('keeps arrays of numbers on one line and parses back to the same value', () => {
    const value = [{ method: 'lamer', passAtK: [0.25, 0.3125, 1e-7, -2], firstWin: [-1, 0, 2], byType: {}, tags: ['a', 'b'], empty: [] }];
    const text = readableJson(value);
    expect(JSON.parse(text)).toEqual(value);
    expect(text).toContain('"passAtK": [0.25, 0.3125, 1e-7, -2],');
    expect(text).toContain('"firstWin": [-1, 0, 2],');
    expect(text).toContain('"tags": [\n');
    expect(text.endsWith('}\n]\n')).toBe(true);
  });
});
