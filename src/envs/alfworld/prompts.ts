// ALFWorld prompt texts in the project's styles (docs/spec.md §2, §8): the framing (memory, trial line, windowed
// trajectory) is common to all environments; this file holds ALFWorld's own part, which names no command form (game
// files of version 2.1.1 say `put X in/on Y`, later ones `move X to Y`): every observation lists the admissible commands.
// The `paper` style fills LaMer's own ALFWorld templates, read from the user's LaMer checkout.

import { composePlayPrompt, composeReflectPrompt, type CompactObservation } from '../common/framing.js';
import {
  CURRENT_TRAJECTORY_TEMPLATES,
  MEMORY_TEMPLATES,
  lamerAction,
  lamerCurrentTrajectory,
  lamerMemory,
  type LamerTemplates,
} from '../common/paper-prompts.js';
import { pyFormat, pyStrip } from '../common/python.js';
import type { PlayPromptInput, ReflectPromptInput, TrajectoryStep } from '../types.js';

export interface AlfWorldPromptSettings {
  /** The task sentence (after "Your task is to: "). */
  goal: string;
  maxTurns: number;
}

export function alfWorldRules(s: AlfWorldPromptSettings): string {
  return [
    'You are an expert agent operating in the ALFRED embodied household environment, through text.',
    `Your task is to: ${s.goal}`,
    'The room has numbered receptacles (countertop 1, cabinet 2, fridge 1, ...) holding numbered objects (apple 1, ...).',
    'You carry one object at a time; closed receptacles must be opened to see or take what is inside; a clean, hot',
    'or cool object is cleaned in a sinkbasin, heated in a microwave or cooled in a fridge while you carry it; to look',
    'at something under a lamp, carry it to the lamp and use the lamp. Any receptacle of the named type will do.',
    'Each observation ends with the admissible actions; anything else gets "Nothing happens.".',
    `You have at most ${s.maxTurns} actions.`,
  ].join('\n');
}

export function alfWorldAnswerFormat(): string {
  return (
    'First reason step by step about where the needed object can be and what remains to be done. Then give exactly' +
    ' one admissible action inside <action> and </action>, for example: <action>go to countertop 1</action>'
  );
}

const REFLECT_HINT =
  'Name the step that failed or the places searched in vain, say where the needed objects and receptacles are, and' +
  ' write the sequence of commands to use next time.';

const ADMISSIBLE_HEAD = '\n\nAdmissible actions: ';

/** An observation as the project's styles show it: the game's text, then the admissible commands. */
export function withAdmissible(text: string, admissible: readonly string[]): string {
  return `${text}${ADMISSIBLE_HEAD}${admissible.join(', ')}`;
}

/** Compact: the non-empty lines but the banner and the task (the prompt opens with it), the admissible actions as `can: ...`. */
export const compactAlfWorldObservation: CompactObservation = (text) =>
  text
    .split('\n')
    .map((line) => line.trim().replace(/^Admissible actions: /, 'can: '))
    .filter((line) => line.length > 0 && !line.startsWith('-= Welcome') && !line.startsWith('Your task is to: '))
    .join(' / ');

export function alfWorldPlayPrompt(input: PlayPromptInput, s: AlfWorldPromptSettings): string {
  return composePlayPrompt({
    input,
    rules: alfWorldRules(s),
    answerFormat: alfWorldAnswerFormat(),
    compactTag: `alf ${s.goal}`,
    compactObservation: compactAlfWorldObservation,
  });
}

export function alfWorldReflectPrompt(input: ReflectPromptInput, s: AlfWorldPromptSettings): string {
  return composeReflectPrompt({
    input,
    rules: alfWorldRules(s),
    reflectHint: REFLECT_HINT,
    compactTag: `alf ${s.goal}`,
    compactObservation: compactAlfWorldObservation,
  });
}

// ---- promptStyle `paper`: LaMer's ALFWorld templates (read from the user's LaMer checkout) ----

/** The constants of LaMer's alfworld/prompt.py that the paper prompts fill. */
export const ALFWORLD_PAPER_TEMPLATES = ['ALFWORLD_PLAY_PROMPT', 'ALFWORLD_REFLECT_PROMPT', ...MEMORY_TEMPLATES, ...CURRENT_TRAJECTORY_TEMPLATES] as const;

/** LaMer's ALFWorld manager fetches the last 15 steps of a trial, for play and for reflection alike. */
export const ALFWORLD_HISTORY_LENGTH = 15;

/** The game's own text of an observation (the project's styles append the admissible actions to it). */
export function gameText(text: string): string {
  const at = text.lastIndexOf(ADMISSIBLE_HEAD);
  return at < 0 ? text : text.slice(0, at);
}

/**
 * LaMer's ALFWorld memory (SimpleMemory.fetch): the last 15 steps, numbered by their place in the episode, each as
 * `Action k: {action}\nObservation k: {observation}`, joined by newlines; the action as LaMer's projection sent it.
 */
export function alfWorldHistory(steps: readonly TrajectoryStep[]): string {
  const recent = steps.slice(Math.max(0, steps.length - ALFWORLD_HISTORY_LENGTH));
  const first = steps.length - recent.length;
  return recent.map((s, j) => `Action ${first + j + 1}: ${lamerAction(s)}\nObservation ${first + j + 1}: ${gameText(s.observation)}`).join('\n');
}

/** The admissible actions as LaMer's manager lists them: quoted, `,\n ` between, without `help`. */
export function lamerAdmissibleList(admissible: readonly string[]): string {
  return admissible
    .filter((s) => s !== 'help')
    .map((s) => `'${s}'`)
    .join(',\n ');
}

/**
 * The play prompt as LaMer's ALFWorld environment manager builds it: the initial observation, the memory of earlier
 * trials, the current trial's history and the admissible actions of the current state, stripped.
 */
export function alfWorldPaperPlayPrompt(input: PlayPromptInput, t: LamerTemplates, admissible: readonly string[]): string {
  const where = t.file;
  const past = lamerMemory(t.templates, input.episode, input.past ?? [], input.memoryMode ?? 'reflection_only', (p) => alfWorldHistory(p.steps), where);
  const current = lamerCurrentTrajectory(t.templates, input.steps.length, input.episode, input.steps.length > 0 ? alfWorldHistory(input.steps) : '', where);
  const fields = {
    init_observation: gameText(input.initial.text),
    past_trajectories_reflections: past,
    current_trajectory: current,
    admissible_actions: lamerAdmissibleList(admissible),
  };
  return pyStrip(pyFormat(t.templates.ALFWORLD_PLAY_PROMPT, fields, `${where} ALFWORLD_PLAY_PROMPT`));
}

/** The reflect prompt as LaMer builds it: the initial observation and the failed trial's history, stripped. */
export function alfWorldPaperReflectPrompt(input: ReflectPromptInput, t: LamerTemplates): string {
  const where = t.file;
  const current = lamerCurrentTrajectory(t.templates, input.steps.length, input.episode, input.steps.length > 0 ? alfWorldHistory(input.steps) : '', where);
  return pyStrip(
    pyFormat(
      t.templates.ALFWORLD_REFLECT_PROMPT,
      { init_observation: gameText(input.initial.text), current_trajectory: current },
      `${where} ALFWORLD_REFLECT_PROMPT`,
    ),
  );
}
