// `lamer train`: runs a training job from a named config (default: the CPU comparison of LaMer and GiGPO), once or,
// with --seeds, once per seed into its own run folder, followed by the across-seed comparison of those folders.
import { join } from 'node:path';
import { compareRuns, formatRunsComparison } from '../../eval/across-runs.js';
import { describeTaskSet } from '../../eval/evaluate.js';
import { loadConfig } from '../../train/config.js';
import { runJob } from '../../train/job.js';
import { codeVersion } from '../../train/code-version.js';
import { createNativeRuntime } from '../../train/native-runtime.js';
import { parseCommandArgs, parseSeedList } from '../args.js';
import type { Command } from '../command.js';
import { readRunEvaluation } from './compare.js';
import { joinRunGroup } from '../../train/distributed.js';
import { launchLocalRanks, launchSeeds } from '../launch.js';
import { onStopSignals } from '../interrupt.js';

const usage = `usage: lamer train [--config NAME|FILE] [--set FIELD=VALUE ...] [--method M] [--seeds LIST] [--name NAME] [--resume | --force] [--nproc N | --jobs N] [--quiet]

Trains with the config (default: configs/default.yaml, which warm-starts a small model, trains LaMer and GiGPO at
an equal episode budget on MineSweeper 5x5 and evaluates both, the frozen warm start with reflections and the chance
rows on held-out tasks). Writes the run folder (runs/NAME): config.json, metrics.jsonl, checkpoints/, eval.json.
  --config   a name in configs/ (e.g. minesweeper-lamer) or a path to a YAML file
  --set      override a field, e.g. --set optim.lr=1e-5 --set rollout.groupSize=4 (repeatable)
  --method   train this method instead of the config's (drops a comparison list)
  --seeds    run the job once per seed, e.g. 0-4 or 0,2,7: seed S goes to runs/NAME-seedS, and the end prints
             \`lamer compare\` of those folders (per-seed paired bootstrap, across-seed t-intervals)
  --jobs     with --seeds, run up to N seeds at once, each in its own process (lines marked [seed S]) with the
             thread count a lone run takes (the machine's cores, or LAMER_THREADS): a seed computes what it computes
             alone. One process of a small model leaves part of the cores idle; on 2 cores two WebShop seeds at once
             make 1.5-1.6x the steps/s of one. A seed that fails stops the others (they save what completed)
  --name     the run folder's name (runs/NAME; default the config's name)
  --resume   continue from the run folder's latest checkpoint, or a warm start cut short from its last save
             (RUN/warm-start.partial, every sft.checkpointEvery steps and on Ctrl-C); a finished run is left as it is
  --force    replace a run folder that already holds a run (without it, an existing run is never overwritten)
  --nproc    data-parallel training in N local processes (c10d Gloo on the CPU, NCCL with one GPU per process):
             each plays its share of every iteration's tasks and evaluation, and all take the same steps. Under
             torchrun (\`torchrun --nproc-per-node N --no-python node bin/lamer.js train ...\`, multi-node too) the
             variables it sets (RANK, WORLD_SIZE, MASTER_ADDR, ...) do the same without --nproc. LAMER_DIST_TIMEOUT
             (seconds, default 1800) bounds every collective: a rank that dies stops the others with E_DIST.
  --quiet    no progress bars`;

export const command: Command = {
  name: 'train',
  summary: 'train a policy (default job: LaMer vs GiGPO on a CPU) and print pass@k on held-out tasks',
  usage,
  async run(argv) {
    // The code this process loaded is the checkout as it is now: read its commit before a long job runs, so that a
    // commit made while the job runs is not recorded as the code of its later runs (codeVersion caches per process).
    codeVersion();
    const values = parseCommandArgs('train', usage, argv, {
      config: { type: 'string', default: 'default' },
      set: { type: 'string', multiple: true, default: [] },
      method: { type: 'string' },
      seeds: { type: 'string' },
      resume: { type: 'boolean', default: false },
      force: { type: 'boolean', default: false },
      name: { type: 'string' },
      nproc: { type: 'string' },
      jobs: { type: 'string' },
      quiet: { type: 'boolean', default: false },
    });
    if (!values) return 2;
    const jobCount = values.jobs === undefined ? 1 : Number(values.jobs);
    if (values.jobs !== undefined) {
      const why =
        !Number.isInteger(jobCount) || jobCount < 1 || jobCount > 64
          ? `--jobs expects a number of processes from 1 to 64, found ${JSON.stringify(values.jobs)}`
          : values.seeds === undefined
            ? '--jobs runs seeds side by side: pass --seeds too (e.g. --seeds 0-2 --jobs 2)'
            : values.nproc !== undefined
              ? '--jobs runs seeds side by side and --nproc one run as several ranks; pass one of them'
              : process.env.WORLD_SIZE
                ? '--jobs starts its own processes, but WORLD_SIZE is set (torchrun or another launcher started this one); drop --jobs'
                : undefined;
      if (why) {
        console.error(`lamer train: ${why}\n\n${usage}`);
        return 2;
      }
    }
    if (values.nproc !== undefined) {
      const n = Number(values.nproc);
      if (!Number.isInteger(n) || n < 1 || n > 1024) {
        console.error(`lamer train: --nproc expects a number of processes from 1 to 1024, found ${JSON.stringify(values.nproc)}\n\n${usage}`);
        return 2;
      }
      if (process.env.WORLD_SIZE) {
        console.error('lamer train: --nproc starts its own process group, but WORLD_SIZE is set (torchrun or another launcher started this one); drop --nproc');
        return 2;
      }
      // The same command in n processes, without --nproc, each with torchrun's variables.
      return launchLocalRanks(n, ['train', ...dropOptions(argv, 'nproc')]);
    }
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
    if (seeds && seeds.length > 1 && jobCount > 1) return trainSeedsSideBySide(argv, values.config!, overrides, seeds, jobCount);
    // Under torchrun (or --nproc): join the process group before anything is read or written. With CUDA each process
    // takes the GPU of its LOCAL_RANK.
    const { dist, device } = joinRunGroup(loadConfig(values.config!, overrides).model.device);
    if (device) overrides.push(`model.device=${device}`);
    const main = dist?.isMain ?? true;
    const print = (line: string) => {
      if (main) console.log(line);
    };
    const base = loadConfig(values.config!, overrides);
    // One job per seed, each in its own folder; without --seeds, the one job the config names.
    const jobs = seeds ? seeds.map((s) => loadConfig(values.config!, [...overrides, `seed=${s}`, `name=${base.name}-seed${s}`])) : [base];
    // SIGINT / SIGTERM: the completed iterations (or warm-start steps) are saved, then the command exits 130 / 143.
    const stops = onStopSignals('lamer train');
    const runDirs: string[] = [];
    try {
      for (const config of jobs) {
        if (seeds) print(`\n[train] seed ${config.seed}: runs into ${join(config.runsDir, config.name)}`);
        const { runDir, table, results } = await runJob(config, {
          runtime: createNativeRuntime,
          resume: values.resume,
          force: values.force,
          signal: stops.signal,
          progress: !values.quiet && main,
          dist,
        });
        runDirs.push(runDir);
        const scored = results[0]?.taskSet ? describeTaskSet(results[0].taskSet) : `${config.eval.tasks} tasks`;
        print(`\n${config.env.name}: pass@k on ${scored}${seeds ? ` (seed ${config.seed})` : ''}${dist ? ` (${dist.size} processes)` : ''}\n${table}`);
        print(
          `run folder: ${runDir} (eval.json, metrics.jsonl, transcripts.jsonl of the last evaluation${config.compare ? " in each method's folder" : ''}; ` +
            `\`lamer report ${runDir}\` draws the charts)`,
        );
      }
      if (seeds && main) printAcrossSeeds(runDirs);
      return 0;
    } catch (e) {
      if (!stops.received()) throw e;
      const where = jobs
        .map((c) => join(c.runsDir, c.name))
        .slice(0, runDirs.length + 1)
        .at(-1);
      console.error(`lamer train: interrupted; \`lamer train --resume\` with the same options continues ${where}`);
      return stops.status();
    } finally {
      stops.dispose();
      await dist?.close();
    }
  },
};

/**
 * `--seeds LIST --jobs N`: each seed as `lamer train` of its own (the same options, `--set seed=S --name NAME-seedS`
 * in place of --seeds and --name: the config a sequential job gives seed S), at most n at once; then the across-seed
 * comparison the sequential job prints.
 */
async function trainSeedsSideBySide(argv: readonly string[], configName: string, overrides: string[], seeds: number[], n: number): Promise<number> {
  const base = loadConfig(configName, overrides);
  const rest = dropOptions(argv, 'jobs', 'seeds', 'name');
  const nameOf = (seed: number) => `${base.name}-seed${seed}`;
  const runDirs = seeds.map((s) => join(base.runsDir, nameOf(s)));
  const at = Math.min(n, seeds.length);
  console.log(`[train] ${seeds.length} seeds, ${at} at a time, each in its own process: ${runDirs.join(', ')}`);
  const status = await launchSeeds(seeds, at, (seed) => ['train', ...rest, '--set', `seed=${seed}`, '--name', nameOf(seed)]);
  if (status === 130 || status === 143) {
    console.error('lamer train: interrupted; `lamer train --resume` with the same options continues each seed where it stopped');
    return status;
  }
  if (status !== 0) return status;
  printAcrossSeeds(runDirs);
  return 0;
}

/** The across-seed comparison a job of several seeds ends with, read back from the seeds' run folders. */
function printAcrossSeeds(runDirs: string[]): void {
  console.log(`\nacross ${runDirs.length} seed${runDirs.length === 1 ? '' : 's'} (\`lamer compare ${runDirs.join(' ')}\` prints this again)\n`);
  console.log(formatRunsComparison(compareRuns(runDirs.map(readRunEvaluation))));
}

/** argv without the options `names` and their values (`--name VALUE` / `--name=VALUE`). */
function dropOptions(argv: readonly string[], ...names: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const name = names.find((n) => argv[i] === `--${n}` || argv[i].startsWith(`--${n}=`));
    if (name === undefined) out.push(argv[i]);
    else if (argv[i] === `--${name}`) i++; // its value follows
  }
  return out;
}
