// `lamer train`: runs a training job from a named config (default: the CPU comparison of LaMer and GiGPO).
import { loadConfig } from '../../train/config.js';
import { runJob } from '../../train/job.js';
import { createNativeRuntime } from '../../train/native-runtime.js';
import { parseCommandArgs } from '../args.js';
import type { Command } from '../command.js';

const usage = `usage: lamer train [--config NAME|FILE] [--set FIELD=VALUE ...] [--method M] [--resume] [--quiet]

Trains with the config (default: configs/default.yaml, which warm-starts a small model, trains LaMer and GiGPO at
an equal episode budget on MineSweeper 4x4 and evaluates both on held-out tasks). Writes the run folder
(runs/NAME): config.json, metrics.jsonl, checkpoints/, eval.json.
  --config   a name in configs/ (e.g. minesweeper-lamer) or a path to a YAML file
  --set      override a field, e.g. --set optim.lr=1e-5 --set rollout.groupSize=4 (repeatable)
  --method   train this method instead of the config's (drops a comparison list)
  --resume   continue from the run folder's latest checkpoint
  --quiet    no progress bars`;

export const command: Command = {
  name: 'train',
  summary: 'train a policy (default job: LaMer vs GiGPO on a CPU) and print pass@k on held-out tasks',
  usage,
  async run(argv) {
    const values = parseCommandArgs('train', usage, argv, {
      config: { type: 'string', default: 'default' },
      set: { type: 'string', multiple: true, default: [] },
      method: { type: 'string' },
      resume: { type: 'boolean', default: false },
      quiet: { type: 'boolean', default: false },
    });
    if (!values) return 2;
    const overrides = [...(values.set ?? [])];
    if (values.method) overrides.push(`method=${values.method}`, 'compare=null');
    const config = loadConfig(values.config!, overrides);
    const controller = new AbortController();
    const stop = () => controller.abort(new Error('interrupted'));
    process.once('SIGINT', stop);
    try {
      const { runDir, table } = await runJob(config, {
        runtime: createNativeRuntime,
        resume: values.resume,
        signal: controller.signal,
        progress: !values.quiet,
      });
      console.log(`\n${config.env.name}: pass@k on ${config.eval.tasks} held-out tasks\n${table}`);
      console.log(
        `run folder: ${runDir} (eval.json, metrics.jsonl, transcripts.jsonl of the last evaluation${config.compare ? ' in each method\'s folder' : ''}; ` +
          `\`lamer report ${runDir}\` draws the charts)`,
      );
      return 0;
    } finally {
      process.off('SIGINT', stop);
    }
  },
};
