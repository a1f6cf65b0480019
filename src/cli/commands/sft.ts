// `lamer sft`: the supervised warm start alone: scripted demonstrations (with scripted reflections) -> a checkpoint.
import { join } from 'node:path';
import { loadConfig } from '../../train/config.js';
import { createNativeRuntime } from '../../train/native-runtime.js';
import { Trainer } from '../../train/trainer.js';
import { parseCommandArgs } from '../args.js';
import type { Command } from '../command.js';
import { ensureParentDir } from '../../util/fs.js';
import { existsSync } from 'node:fs';
import { removeWarmStartSaves, WARM_START_SAVES } from '../../train/warm-start.js';
import { onStopSignals } from '../interrupt.js';

const usage = `usage: lamer sft [--config NAME|FILE] [--set FIELD=VALUE ...] [--out DIR] [--resume]

Plays config.sft.trials LaMer trials with the environment's scripted players (MineSweeper: the logic player with
memory, guessing as config.sft.guess says, random or in reading order; others: the expert with random moves left
out), and trains the model on them: config.sft.reflectSteps steps on the reflection rows alone (fewer once their
loss reaches config.sft.reflectUntilLoss), then config.sft.steps steps on all rows (cross-entropy on the responses
only; with config.sft.unlikelihood > 0 on ALFWorld and WebShop, also -log(1 - p) on the moves each state refuses).
Writes the checkpoint to DIR (default runs/NAME/warm-start); train from it with --set model.path=DIR.

Every config.sft.checkpointEvery steps, and on Ctrl-C (SIGINT) or SIGTERM, it saves where it stands into
runs/NAME/warm-start.partial; --resume continues from there to the weights an uninterrupted warm start gives.`;

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
      resume: { type: 'boolean', default: false },
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
    const saves = join(trainer.runDir, WARM_START_SAVES);
    if (!values.resume && existsSync(saves)) {
      console.error(`lamer sft: ${saves} holds a warm start cut short; continue it with --resume, or remove the folder to start over`);
      return 2;
    }
    const stops = onStopSignals('lamer sft');
    const runtime = await createNativeRuntime(config, trainer.runDir);
    try {
      const losses = await trainer.warmStart(runtime, stops.signal, values.resume);
      await runtime.save(out);
      removeWarmStartSaves(trainer.runDir);
      console.log(`warm start: ${losses.length} steps, loss ${losses[0]?.toFixed(4)} -> ${losses.at(-1)?.toFixed(4)}; wrote ${out}`);
    } catch (e) {
      if (!stops.received()) throw e;
      console.error(`lamer sft: interrupted; \`lamer sft --resume\` with the same options continues from ${saves}`);
      return stops.status();
    } finally {
      stops.dispose();
      await runtime.dispose();
    }
    return 0;
  },
};
