// `lamer tensorboard PATH`: TensorBoard event files for runs from their metrics.jsonl (runs of this build write them
// as they go; this is for runs made without them, or to write them elsewhere).
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseCommandLine } from '../args.js';
import type { Command } from '../command.js';
import { findRuns } from '../../report/runs.js';
import { eventFiles, writeRunEvents } from '../../train/tensorboard.js';
import { LamerError } from '../../errors.js';

const usage = `usage: lamer tensorboard PATH [--out DIR] [--force]

Writes a TensorBoard event file for every run folder at or under PATH (a run, a comparison job, a folder of seeds)
from its metrics.jsonl: every scalar of its iterations and evaluations under the tags a training run writes live
(rollout/, train/, time/, memory/, agreement/, eval/). Then: tensorboard --logdir PATH (or DIR).
  --out    write the files under DIR, in the runs' folders relative to PATH, leaving PATH untouched
  --force  replace a run folder's event files (without it, a run that has them is left as it is)`;

export const command: Command = {
  name: 'tensorboard',
  summary: 'write TensorBoard event files for runs from their metrics.jsonl',
  usage,
  async run(argv: string[]): Promise<number> {
    const parsed = parseCommandLine('tensorboard', usage, argv, { out: { type: 'string' }, force: { type: 'boolean' } });
    if (!parsed) return 2;
    const { values, positionals } = parsed;
    if (positionals.length !== 1) {
      console.error(`lamer tensorboard: give one PATH\n\n${usage}`);
      return 2;
    }
    const path = resolve(positionals[0]);
    if (!existsSync(path) || !statSync(path).isDirectory())
      throw new LamerError('E_IO', `${positionals[0]} is not a folder (a run, a job or a folder of runs)`);
    const runs = findRuns(path);
    if (runs.length === 0) throw new LamerError('E_IO', `no run folder (with metrics.jsonl) at or under ${positionals[0]}`);
    let kept = 0;
    for (const run of runs) {
      const out = values.out ? join(resolve(values.out), relative(path, run)) : run;
      const existing = eventFiles(out);
      if (existing.length > 0 && !values.force) {
        console.log(`${relative(process.cwd(), out) || '.'}: has event files already (--force replaces them)`);
        kept++;
        continue;
      }
      for (const f of existing) rmSync(f);
      mkdirSync(out, { recursive: true });
      const r = writeRunEvents(run, out);
      const torn = r.skipped > 0 ? `; ${r.skipped} torn line(s) left out` : '';
      console.log(`${relative(process.cwd(), r.path)}: ${r.events} events, ${r.scalars} scalars${torn}`);
    }
    const where = values.out ?? positionals[0];
    console.log(`${runs.length - kept} of ${runs.length} run(s) written; view them with: tensorboard --logdir ${where}`);
    return 0;
  },
};
