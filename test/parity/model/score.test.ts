// `lamer score` against transformers: the log-probs it writes for a tiny model equal transformers' within 1e-4.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { command as initModel } from '../../../src/cli/commands/init-model.js';
import { command as score } from '../../../src/cli/commands/score.js';
import { parityPython, Oracle } from '../python.js';
import { captured, maxAbsDiff, removeTempDirs, tempDir } from '../../helpers/index.js';

afterAll(removeTempDirs);

const py = parityPython();

describe.skipIf(!py.ok)(`lamer score${py.ok ? '' : ` (skipped: ${py.reason})`}`, () => {
  let oracle: Oracle;
  let tiny: string;
  beforeAll(async () => {
    oracle = new Oracle();
    tiny = tempDir('tiny');
    expect((await captured(() => initModel.run(['--preset', 'tiny', '--out', tiny, '--seed', '1']))).code).toBe(0);
  });
  afterAll(() => oracle?.close());

  it('writes one {"logprobs"} line per {"ids"} line, equal to transformers within 1e-4', async () => {
    const d = tempDir('score');
    const seqs = [[1, 2, 3, 4, 5, 6], [7], [100, 200, 300, 400, 500, 12, 13, 14, 15, 16, 17], [540, 3]];
    writeFileSync(join(d, 'in.jsonl'), `${seqs.map((ids) => JSON.stringify({ ids })).join('\n')}\n`);
    expect(await score.run(['--model', tiny, '--input', join(d, 'in.jsonl'), '--out', join(d, 'out.jsonl'), '--batch', '3'])).toBe(0);
    const lines = readFileSync(join(d, 'out.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { logprobs: number[] }).logprobs);
    expect(lines.map((l) => l.length)).toEqual(seqs.map((s) => s.length - 1));
    const ref = await oracle.reference(tiny, seqs);
    expect(maxAbsDiff(lines, ref.logprobs)).toBeLessThan(1e-4);
  });
});
