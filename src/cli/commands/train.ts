// `lamer train`: runs a training job from a named config (default: the CPU comparison of LaMer and GiGPO), once or,
// with --seeds, once per seed into its own run folder, followed by the across-seed comparison of those folders.
import { LamerError } from '../../errors.js';
import { join } from 'node:path';
import { compareRuns, formatRunsComparison } from '../../eval/across-runs.js';
import { loadConfig } from '../../train/config.js';
import { runJob } from '../../train/job.js';
import { createNativeRuntime } from '../../train/native-runtime.js';
import { parseCommandArgs, parseSeedList } from '../args.js';
import type { Command } from '../command.js';
import { readRunEvaluation } from './compare.js';

const usage = `usage: lamer train [--config NAME|FILE] [--set FIELD=VALUE ...] [--method M] [--seeds LIST] [--name NAME] [--resume | --force] [--quiet]

Trains with the config (default: configs/default.yaml, which warm-starts a small model, trains LaMer and GiGPO at
an equal episode budget on MineSweeper 4x4 and evaluates both, the frozen warm start with reflections and the chance
rows on held-out tasks). Writes the run folder (runs/NAME): config.json, metrics.jsonl, checkpoints/, eval.json.
  --config   a name in configs/ (e.g. minesweeper-lamer) or a path to a YAML file
  --set      override a field, e.g. --set optim.lr=1e-5 --set rollout.groupSize=4 (repeatable)
  --method   train this method instead of the config's (drops a comparison list)
  --seeds    run the job once per seed, e.g. 0-4 or 0,2,7: seed S goes to runs/NAME-seedS, and the end prints
             \`lamer compare\` of those folders (per-seed paired bootstrap, across-seed t-intervals)
  --name     the run folder's name (runs/NAME; default the config's name)
  --resume   continue from the run folder's latest checkpoint (a finished run is left as it is)
  --force    replace a run folder that already holds a run (without it, an existing run is never overwritten)
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
      seeds: { type: 'string' },
      resume: { type: 'boolean', default: false },
      force: { type: 'boolean', default: false },
      name: { type: 'string' },
      quiet: { type: 'boolean', default: false },
    });
    if (!values) return 2;
    if (values.resume && values.force) {
      console.error(`lamer train: --resume continues a run and --force replaces it; pass one of them\n\n${usage}`);
      return 2;
    }
    const seeds = values.seeds === undefined ? undefined : parseSeedList(values.seeds);
    if (values.seeds !== undefined && seeds === undefined) {
      console.error(`lamer train: --seeds expects seeds and ranges separated by commas (e.g. 0-4 or 0,2,7), found ${JSON.stringify(values.seeds)}\n\n${usage}`);
      return 2;
    }
    const overrides = [...(values.set ?? [])];
    if (values.name !== undefined) overrides.push(`name=${values.name}`);
    if (values.method) overrides.push(`method=${values.method}`, 'compare=null');
    const base = loadConfig(values.config!, overrides);
    // One job per seed, each in its own folder; without --seeds, the one job the config names.
    const jobs = seeds ? seeds.map((s) => loadConfig(values.config!, [...overrides, `seed=${s}`, `name=${base.name}-seed${s}`])) : [base];
    // SIGINT / SIGTERM: the current step is abandoned, the completed iterations are checkpointed, and the exit code
    // is 128 + the signal's number (130, 143); a second signal quits at once.
    const controller = new AbortController();
    let received: NodeJS.Signals | undefined;
    const stop = (signal: NodeJS.Signals) => {
      if (received) process.exit(signal === 'SIGTERM' ? 143 : 130);
      received = signal;
      console.error(`\nlamer train: ${signal}: stopping after saving what completed (send it again to quit at once)`);
      controller.abort(new LamerError('E_INTERRUPTED', `interrupted by ${signal}`));
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    const runDirs: string[] = [];
    try {
      for (const config of jobs) {
        if (seeds) console.log(`\n[train] seed ${config.seed}: runs into ${join(config.runsDir, config.name)}`);
        const { runDir, table } = await runJob(config, {
          runtime: createNativeRuntime,
          resume: values.resume,
          force: values.force,
          signal: controller.signal,
          progress: !values.quiet,
        });
        runDirs.push(runDir);
        console.log(`\n${config.env.name}: pass@k on ${config.eval.tasks} held-out tasks${seeds ? ` (seed ${config.seed})` : ''}\n${table}`);
        console.log(
          `run folder: ${runDir} (eval.json, metrics.jsonl, transcripts.jsonl of the last evaluation${config.compare ? ' in each method\'s folder' : ''}; ` +
            `\`lamer report ${runDir}\` draws the charts)`,
        );
      }
      if (seeds) {
        console.log(`\nacross ${runDirs.length} seed${runDirs.length === 1 ? '' : 's'} (\`lamer compare ${runDirs.join(' ')}\` prints this again)\n`);
        console.log(formatRunsComparison(compareRuns(runDirs.map(readRunEvaluation))));
      }
      return 0;
    } catch (e) {
      if (!received) throw e;
      const where = jobs.map((c) => join(c.runsDir, c.name)).slice(0, runDirs.length + 1).at(-1);
      console.error(`lamer train: interrupted; \`lamer train --resume\` with the same options continues ${where}`);
      return received === 'SIGTERM' ? 143 : 130;
    } finally {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    }
  },
};
