// How far a trainer's log-probs of sampled tokens are from the engine's that sampled them, by the dtypes of the two:
// one MineSweeper rollout of the default job's shape sampled by the engine over a checkpoint loaded in ENGINE dtype,
// its tokens then scored by Policy.logprobs over the same checkpoint in TRAINER dtype (what the update's forward
// computes), compared as the trainer does every iteration (src/train/agreement.ts). CPU.
//
//   npx tsx scripts/agreement-check.ts --model DIR [--tasks 8] [--group 4]
//
// DIR: a checkpoint (e.g. a run's warm-start/ folder); without --model a fresh tiny preset model.
import { parseArgs } from 'node:util';
import { Policy } from '../src/model/policy.js';
import { presetCheckpoint } from '../src/model/presets.js';
import { EngineClient } from '../src/engine/client.js';
import { runRollout } from '../src/rollout/runner.js';
import { createEnv } from '../src/envs/registry.js';
import { taskSeed } from '../src/envs/common/seeds.js';
import { logprobAgreement } from '../src/train/agreement.js';

const { values } = parseArgs({ options: { model: { type: 'string' }, tasks: { type: 'string', default: '8' }, group: { type: 'string', default: '4' } } });
type DType = 'float32' | 'bfloat16';

async function open(dtype: DType): Promise<Policy> {
  if (values.model) return Policy.load(values.model, { device: 'cpu', dtype, paramDtype: dtype });
  const preset = await presetCheckpoint('tiny', 'compact');
  return Policy.init(preset.config, { device: 'cpu', dtype, paramDtype: dtype, seed: 0, assets: preset.assets });
}

const tasks = Array.from({ length: Number(values.tasks) }, (_, i) => taskSeed('train', i));
console.log(`model ${values.model ?? 'tiny preset (random)'}; ${tasks.length} MineSweeper 5x5 tasks x ${values.group} trials of 3 episodes, temperature 1`);
console.log('engine    trainer   tokens  mean|diff|  max|diff|   k3 KL');
for (const [engineDtype, trainerDtype] of [
  ['float32', 'float32'],
  ['bfloat16', 'float32'],
  ['bfloat16', 'bfloat16'],
] as [DType, DType][]) {
  const sampler = await open(engineDtype);
  const client = new EngineClient(sampler, { slots: 96 });
  const batch = await runRollout({
    policy: client,
    env: () => createEnv('minesweeper', { rows: 5, cols: 5, mines: 3, maxTurns: 10 }),
    tasks,
    trialsPerTask: Number(values.group),
    trial: { episodes: 3, reflect: true, memoryMode: 'reflection_only', style: 'compact', sampling: { temperature: 1, topP: 1, topK: 0, maxNewTokens: 96 } },
    seed: 1,
  });
  client.dispose();
  sampler.dispose();
  const rows = batch.responseIds.flatMap((r, i) => (r.length > 0 ? [i] : []));
  const scorer = await open(trainerDtype);
  const scored = await scorer.logprobs({ prompts: rows.map((i) => batch.promptIds[i]), completions: rows.map((i) => batch.responseIds[i]) });
  scorer.dispose();
  const flat = Float32Array.from(scored.flatMap((a) => Array.from(a)));
  const a = logprobAgreement(
    rows.map((_, j) => j),
    rows,
    batch.logprobs,
    flat,
  );
  console.log(
    `${engineDtype.padEnd(9)} ${trainerDtype.padEnd(9)} ${String(a.tokens).padStart(6)}  ${a.meanAbs.toExponential(2).padStart(9)}  ${a.maxAbs.toExponential(2).padStart(9)}  ${a.k3.toExponential(2).padStart(9)}`,
  );
}
