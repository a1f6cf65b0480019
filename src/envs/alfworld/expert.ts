// The scripted ALFWorld player: it replays the game's walkthrough while the episode has followed it from the initial
// state (every game file carries one; generated games get the planner's), and elsewhere plans from the current state
// with the planner over the engine's states. A plan is kept while the episode follows it, so the planner runs only
// when the state leaves the plan. Its reflection names the wasted actions and the plan from the initial state.

import { LamerError } from '../../errors.js';
import type { Expert, TrajectoryStep } from '../types.js';
import { NOTHING_HAPPENS, type AlfWorldEnv } from './env.js';
import { planOperators } from './engine/planner.js';

export class AlfWorldExpert implements Expert {
  /** The planned commands from a state and the state after each, while the episode follows them. */
  private plan: { states: string[]; commands: string[] } | null = null;

  constructor(private readonly env: AlfWorldEnv) {}

  /** The next command toward the goal from the current state ('look' when the goal holds or no plan is found). */
  nextCommand(): string {
    const env = this.env;
    const history = env.history;
    const walkthrough = env.walkthrough();
    if (history.length < walkthrough.length && history.every((c, i) => c === walkthrough[i])) return walkthrough[history.length];
    const key = stateKey(env.game.trueState());
    if (this.plan !== null) {
      const at = this.plan.states.indexOf(key);
      if (at >= 0 && at < this.plan.commands.length) return this.plan.commands[at];
    }
    const game = env.game.fork();
    const ops = planOperators(game.logic.task, game.trueState());
    if (ops === null || ops.length === 0) return 'look';
    const states = [key];
    const commands: string[] = [];
    for (const op of ops) {
      const command = game.commandOf(op);
      if (command === undefined) throw new LamerError('E_ENV', `alfworld expert: planned operator ${op.name} is not admissible`);
      commands.push(command);
      game.step(command);
      states.push(stateKey(game.trueState()));
    }
    this.plan = { states, commands };
    return commands[0];
  }

  act(): string {
    const cmd = this.nextCommand();
    return `I know where everything is; the next step towards the goal is: ${cmd}.\n<action>${cmd}</action>`;
  }

  reflect(steps: TrajectoryStep[]): string {
    const wasted = steps.filter((s) => s.observation.startsWith(NOTHING_HAPPENS)).length;
    const reasons: string[] = [];
    if (steps.length === 0) reasons.push('I took no action.');
    else reasons.push(`I used ${steps.length} action(s) without completing the task.`);
    if (wasted > 0) reasons.push(`${wasted} of them were not admissible and did nothing.`);
    const plan = this.env.walkthrough();
    const wrong = reasons.join(' ');
    return `Looking back: ${wrong}\n<remark>What went wrong: ${wrong} Plan for the next trial (${plan.length} actions): ${plan.join(', ')}.</remark>`;
  }
}

function stateKey(s: Uint8Array): string {
  let key = '';
  for (let i = 0; i < s.length; i++) if (s[i] === 1) key += `${i},`;
  return key;
}
