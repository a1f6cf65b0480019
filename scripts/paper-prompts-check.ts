// Checks lamer's `paper` prompts against LaMer's own code, given a LaMer checkout:
//
//   npx tsx scripts/paper-prompts-check.ts /path/to/LaMer
//
// Plays scripted Sokoban and MineSweeper trials (both fidelities, the three memory modes, three episodes, responses
// that cover the parsing rules) with promptStyle 'paper' and the checkout's templates, then replays every trial with
// LaMer's own prompt.py, memory.py and projection.py under Python (scripts/paper-prompts-check.py) and compares each
// prompt. Under fidelity 'paper' the actions LaMer's memory records are LaMer's parse of the same responses. Exits 1
// on any difference, printing it. Needs python3 (the standard library is enough).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MineSweeperEnv } from '../src/envs/minesweeper/env.js';
import { SokobanEnv } from '../src/envs/sokoban/env.js';
import type { Environment, MemoryMode, StepResult } from '../src/envs/types.js';
import { TRAIN_SAMPLING, type GenerateRequest, type TrialView } from '../src/rollout/policy.js';
import { scriptedResult } from '../src/rollout/scripted.js';
import { runTrial } from '../src/rollout/trial.js';

const source = process.argv[2];
if (!source) {
  console.error('usage: npx tsx scripts/paper-prompts-check.ts LAMER_CHECKOUT');
  process.exit(2);
}

/** Sokoban answers: moves, a capitalised move, no tags (one still), `still` and text up to the last </action>. */
const SOKOBAN = [
  '<action>left, right, up</action>',
  'I go <action>Down</action>',
  'no tags here',
  '<action>stay still, up</action> and </action>',
  '<action>up, up, left</action>',
];
/** MineSweeper answers: spaces in the pair, no spaces, no parentheses, off the board, upper-case tags, a cell. */
const MINESWEEPER = [
  '<action>( 1, 1)</action>',
  '<action>(6,6)</action>',
  '<action>2, 3</action>',
  '<action>(9, 9)</action>',
  '<ACTION>(1, 3)</ACTION>',
  '<action>(1, 4)</action>',
];

interface Replayed {
  name: string;
  env: string;
  mode: MemoryMode;
  initial: string;
  rows: Array<{ phase: string; episode: number; turn: number; prompt: string; response: string; obs?: string; done?: boolean; historyAction?: string }>;
}

async function play(name: string, env: Environment, seed: number, mode: MemoryMode, answers: string[]): Promise<Replayed> {
  const steps: StepResult[] = [];
  const step = env.step.bind(env);
  env.step = (response: string) => {
    const r = step(response);
    steps.push(r);
    return r;
  };
  const initial = env.reset(seed).text;
  const policy = (view: TrialView) => ({
    generate: async (request: GenerateRequest) =>
      scriptedResult(
        request,
        view.phase === 'reflect'
          ? `Thinking.\n<remark>  remark after trial ${view.episode + 1} </remark> trailing`
          : answers[(view.steps.length + 2 * view.episode) % answers.length],
      ),
  });
  const result = await runTrial({
    env,
    policy,
    seed,
    group: 0,
    trial: 0,
    config: { episodes: 3, reflect: true, memoryMode: mode, style: 'paper', sampling: TRAIN_SAMPLING },
  });
  let k = 0;
  return {
    name,
    env: env.name,
    mode,
    initial,
    rows: result.rows.map((r) => {
      const row = { phase: r.phase, episode: r.episode, turn: r.turn, prompt: r.prompt, response: r.response };
      if (r.phase !== 'play') return row;
      const s = steps[k++];
      return { ...row, obs: s.observation.text, done: s.done, historyAction: s.historyAction };
    }),
  };
}

const trials: Replayed[] = [];
for (const mode of ['reflection_only', 'history_only', 'history_and_reflection'] as const) {
  for (const fidelity of ['paper', 'lamer'] as const) {
    for (const seed of [0, 4608]) {
      trials.push(await play(`sokoban-${fidelity}`, new SokobanEnv({ fidelity, maxTurns: 4, lamerSource: source }), seed, mode, SOKOBAN));
      trials.push(await play(`minesweeper-${fidelity}`, new MineSweeperEnv({ fidelity, maxTurns: 4, lamerSource: source }), seed + 3, mode, MINESWEEPER));
    }
  }
}
const file = join(mkdtempSync(join(tmpdir(), 'lamer-paper-prompts-')), 'trials.json');
writeFileSync(file, JSON.stringify(trials));
const checker = join(dirname(fileURLToPath(import.meta.url)), 'paper-prompts-check.py');
const run = spawnSync('python3', [checker, source, file], { stdio: 'inherit' });
process.exit(run.status ?? 1);
