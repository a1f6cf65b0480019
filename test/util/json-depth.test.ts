// JSON files read by readJsonFile are refused past MAX_JSON_DEPTH levels of nesting, with the caller's code naming the
// file: JSON.parse takes any depth, but an error message quoting the value (JSON.stringify) or a recursive check of it
// overflows the stack near 10,000 levels with an uncoded RangeError.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonDepth, MAX_JSON_DEPTH, readJsonFile } from '../../src/util/fs.js';
import { LamerError } from '../../src/errors.js';
import { removeTempDirs, tempDir } from '../helpers/index.js';

afterAll(removeTempDirs);

const nested = (n: number, inner = '1') => `{"r": ${'['.repeat(n)}${inner}${']'.repeat(n)}}`;

describe('JSON nesting bound', () => {
  it('counts arrays and objects, not brackets inside strings or escaped quotes', () => {
    expect(jsonDepth('1')).toBe(0);
    expect(jsonDepth('{"a": [1, {"b": []}]}')).toBe(4);
    expect(jsonDepth('{"a": "[[[[{{{{", "b": "\\"[[["}')).toBe(1);
    expect(jsonDepth(nested(50_000), 10)).toBe(11);
  });

  it('readJsonFile refuses a file nested 100,000 deep with the caller code, naming the file', () => {
    const file = join(tempDir('json-depth'), 'adapter_config.json');
    writeFileSync(file, nested(100_000));
    let error: unknown;
    try {
      readJsonFile(file, 'E_CHECKPOINT');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(LamerError);
    expect((error as LamerError).code).toBe('E_CHECKPOINT');
    expect((error as Error).message).toBe(`${file}: arrays and objects nested more than ${MAX_JSON_DEPTH} deep`);
    // Before the bound, quoting the value in an error message overflowed the stack.
    expect(() => JSON.stringify(JSON.parse(nested(100_000)))).toThrow(RangeError);
  });

  it('reads a file nested up to the bound', () => {
    const file = join(tempDir('json-depth'), 'ok.json');
    writeFileSync(file, nested(MAX_JSON_DEPTH - 1, '"]]]"'));
    expect(readJsonFile(file)).toHaveProperty('r');
  });
});
