// A trainer.json's nesting is bounded before any value of it is read or quoted: a deep file is a coded refusal naming
// it, not a stack overflow.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readTrainerState } from '../../src/train/trainer-state.js';
import { removeTempDirs, tempDir } from '../helpers/index.js';

afterAll(removeTempDirs);

function stateDir(text: string): string {
  const dir = join(tempDir('state-depth'), 'ckpt-000002');
  mkdirSync(dir);
  writeFileSync(join(dir, 'trainer.json'), text);
  return dir;
}

describe('readTrainerState nesting', () => {
  it('a trainer.json nested 100,000 deep is E_CHECKPOINT naming the file and the limit', () => {
    const dir = stateDir(`{"iteration": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`);
    expect(() => readTrainerState(dir)).toThrow(
      expect.objectContaining({
        code: 'E_CHECKPOINT',
        message: expect.stringMatching(/ckpt-000002\/trainer\.json: arrays and objects nested more than 1000 deep/),
      }),
    );
  });

  it('a state nested within the limit is still checked field by field', () => {
    const dir = stateDir(`{"iteration": ${'['.repeat(50)}${']'.repeat(50)}, "method": "lamer", "seed": 1}`);
    expect(() => readTrainerState(dir)).toThrow(
      expect.objectContaining({ code: 'E_CHECKPOINT', message: expect.stringContaining("'iteration' must be a count") }),
    );
  });

  it('a well-formed state reads', () => {
    const dir = stateDir(JSON.stringify({ iteration: 2, method: 'lamer', seed: 7 }));
    expect(readTrainerState(dir)).toMatchObject({ iteration: 2, method: 'lamer', seed: 7 });
  });
});
