// `lamer env`: tools for an environment's data. `check` replays the walkthrough of every ALFWorld game under a folder;
// `generate` writes lamer's generated ALFWorld games as game files, laid out as ALFWorld's downloads are.
import { parseCommandLine } from '../args.js';
import type { Command } from '../command.js';
import { HOUSEHOLD_SIZES, readTaskTypes, replayGames, writeGeneratedGames, type HouseholdSize } from '../../envs/alfworld/index.js';
import { loadGameFile } from '../../envs/alfworld/games/data.js';
import { sha256 } from '../../util/hash.js';
import { join } from 'node:path';

const usage = `usage: lamer env check --env alfworld --data DIR
       lamer env generate --env alfworld --out DIR [--train N] [--eval N] [--task-types LIST] [--eval-task-types LIST]
                          [--household standard|small]

check     Replays the walkthrough of every game under DIR (a folder holding game.tw-pddl, at any depth; its
          traj_data.json names the task type when present): each command must be admissible at its step, never
          answer "Nothing happens.", and the goal must hold after the last command and not before. Prints one line
          per game (ok or FAIL, path, task type, steps, the game file's SHA-256) and a summary; exits 0 only if
          every game passes. Point it at an ALFWorld download's json_2.1.1 folder (or one split of it) as it is.
generate  Writes lamer's generated games with their walkthroughs: N training games under DIR/train (task types 1-4
          by default) and N evaluation games under DIR/valid_unseen (all six), each of its seed's content split,
          as ALFWorld lays out its data (<task>-<Object>-<Receptacle>-<seed>/trial_<seed>/). Default 10 and 10.
  --task-types, --eval-task-types  comma-separated task types (names or ALFWorld's numbers 1-6)
  --household  standard (default) or small (the CPU-scale households of env.options.household)`;

/** The first 12 hex digits of a game file's SHA-256 ('?' when it cannot be read). */
function fileHash(file: string): string {
  try {
    return sha256(loadGameFile(file).bytes).slice(0, 12);
  } catch {
    return '?';
  }
}

export const command: Command = {
  name: 'env',
  summary: 'check or generate environment games (ALFWorld: replay walkthroughs, write generated games)',
  usage,
  async run(argv: string[]): Promise<number> {
    const parsed = parseCommandLine('env', usage, argv, {
      env: { type: 'string' },
      data: { type: 'string' },
      out: { type: 'string' },
      train: { type: 'string', default: '10' },
      eval: { type: 'string', default: '10' },
      'task-types': { type: 'string' },
      'eval-task-types': { type: 'string' },
      household: { type: 'string', default: 'standard' },
    });
    if (!parsed) return 2;
    const { values, positionals } = parsed;
    const action = positionals[0];
    const fail = (why: string) => {
      console.error(`lamer env: ${why}\n\n${usage}`);
      return 2;
    };
    if (action !== 'check' && action !== 'generate') return fail(`expected 'check' or 'generate', found ${JSON.stringify(action ?? '')}`);
    if (positionals.length > 1) return fail(`unexpected ${JSON.stringify(positionals[1])}`);
    if (values.env !== 'alfworld') return fail(`--env: only alfworld has games to ${action}; found ${JSON.stringify(values.env ?? '')}`);
    if (action === 'check') {
      if (!values.data) return fail('check needs --data DIR');
      let passed = 0;
      let failed = 0;
      let steps = 0;
      const results = replayGames(values.data, (r) => {
        const hash = fileHash(join(values.data!, r.path, 'game.tw-pddl'));
        if (r.ok) {
          passed++;
          steps += r.steps;
          console.log(`ok    ${r.path}  ${r.taskType ?? '-'}  ${r.steps} steps  sha256 ${hash}`);
        } else {
          failed++;
          console.log(`FAIL  ${r.path}  ${r.taskType ?? '-'}  ${r.problem}`);
        }
      });
      if (results.length === 0) {
        console.error(`lamer env check: no game.tw-pddl under ${values.data}`);
        return 1;
      }
      console.log(`env check: ${results.length} games, ${passed} replayed to the goal (${steps} commands), ${failed} failed`);
      return failed === 0 ? 0 : 1;
    }
    if (!values.out) return fail('generate needs --out DIR');
    const count = (name: 'train' | 'eval') => {
      const n = Number(values[name]);
      return Number.isInteger(n) && n >= 0 ? n : NaN;
    };
    const train = count('train');
    const evalGames = count('eval');
    if (Number.isNaN(train) || Number.isNaN(evalGames)) return fail(`--train and --eval must be whole numbers >= 0; found ${values.train} and ${values.eval}`);
    const types = (v: string | undefined, option: string) =>
      v === undefined
        ? undefined
        : readTaskTypes(
            v.split(',').map((t) => (/^\d+$/.test(t.trim()) ? Number(t) : t.trim())),
            option,
          );
    const household = values.household;
    if (!HOUSEHOLD_SIZES.includes(household as HouseholdSize)) return fail(`--household: expected standard or small, found ${JSON.stringify(household)}`);
    const written = writeGeneratedGames(values.out, {
      household: household as HouseholdSize,
      train,
      eval: evalGames,
      taskTypes: types(values['task-types'], 'taskTypes'),
      evalTaskTypes: types(values['eval-task-types'], 'evalTaskTypes'),
    });
    console.log(`wrote ${written.length} games under ${values.out} (train: ${train}, valid_unseen: ${evalGames})`);
    return 0;
  },
};
