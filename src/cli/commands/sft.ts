// `lamer sft`: the supervised warm start alone: scripted demonstrations (with scripted reflections) -> a checkpoint.
import { join } from 'node:path';
import { loadConfig } from '../../train/config.js';
import { createNativeRuntime } from '../../train/native-runtime.js';
import { Trainer } from '../../train/trainer.js';
import { parseCommandArgs } from '../args.js';
import type { Command } from '../command.js';
import { ensureParentDir } from '../../util/fs.js';

const usage = `usage: lamer sft [--config NAME|FILE] [--set FIELD=VALUE ...] [--out DIR]

Plays config.sft.trials LaMer trials with the environment's scripted players (MineSweeper: the logic player with
memory, guessing as config.sft.guess says, random or in reading order; others: the expert with random moves left
out), and trains the model on them: config.sft.reflectSteps steps on the reflection rows alone (fewer once their
loss reaches config.sft.reflectUntilLoss), then config.sft.steps steps on all rows (cross-entropy on the responses
only; with config.sft.unlikelihood > 0 on ALFWorld and WebShop, also -log(1 - p) on the moves each state refuses).
Writes the checkpoint to DIR (default runs/NAME/warm-start); train from it with --set model.path=DIR.`;

export const command: Command = {
  name: 'sft',
  summary: 'supervised warm start from scripted demonstrations (formats, reflections, use of memory)',
  usage,
  async run(argv) {
    const values = parseCommandArgs('sft', usage, argv, {
      config: { type: 'string', default: 'default' },
      set: { type: 'string', multiple: true, default: [] },
      out: { type: 'string' },
      quiet: { type: 'boolean', default: false },
    });
    if (!values) return 2;
    const config = loadConfig(values.config!, [...(values.set ?? []), 'compare=null']);
    if (config.sft.trials === 0 || config.sft.steps === 0) {
      console.error('lamer sft: the config has no warm start (sft.trials or sft.steps is 0); set them with --set sft.trials=256');
      return 2;
    }
    const trainer = new Trainer(config, { runtime: createNativeRuntime, progress: !values.quiet });
    const out = values.out ?? join(trainer.runDir, 'warm-start');
    ensureParentDir(out); // a bad --out fails now, not after the supervised steps
    const runtime = await createNativeRuntime(config, trainer.runDir);
    try {
      const losses = await trainer.warmStart(runtime);
      await runtime.save(out);
      console.log(`warm start: ${losses.length} steps, loss ${losses[0]?.toFixed(4)} -> ${losses.at(-1)?.toFixed(4)}; wrote ${out}`);
    } finally {
      await runtime.dispose();
    }
    return 0;
  },
};
