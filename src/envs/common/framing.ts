// Prompt framing shared by every environment (SPEC §2): the play prompt (rules, initial state, memory, "Currently
// you are on trial #n+1", the windowed trajectory, answer format) and the reflect prompt, in two styles. `full` is
// natural language for a pretrained LLM; `compact` is one short regular line for tiny models trained from scratch,
// whose character- or word-level tokenizers make every extra word cost context.
// Environments supply only their own parts (rules, answer format, how to shorten an observation).

import { LamerError } from '../../errors.js';
import type { MemoryMode, PlayPromptInput, PromptStyle, ReflectPromptInput, TrajectoryStep } from '../types.js';

export type { MemoryMode } from '../types.js';

/** Steps shown with their observations; older steps keep their action and show `...` for the observation. */
export const DEFAULT_WINDOW = 7;

/** How an environment's observation text is shortened for compact prompts. */
export type CompactObservation = (text: string) => string;

/** Default compact form: non-empty lines, trimmed, joined by ` / `. */
export const joinLines: CompactObservation = (text) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0)
    .join(' / ');

/** "Currently you are on trial #n+1." (full) or "T{n+1}" (compact); `episode` is 0-based. */
export function trialLine(episode: number, style: PromptStyle): string {
  return style === 'full' ? `Currently you are on trial #${episode + 1}.` : `T${episode + 1}`;
}

export interface TrajectoryFormat {
  style: PromptStyle;
  window?: number;
  compactObservation?: CompactObservation;
}

/** How a step marked refused (TrajectoryStep.refused) ends in compact and in full trajectories. */
export const REFUSED_MARK = { compact: ' no', full: ' (refused)' } as const;

/**
 * A trajectory as text. Full: one "Step i" block per step; only the last `window` steps show their observation, the
 * older ones show `...` (bounded context, SPEC §2). Compact: actions only, ` ; `-separated, with older ones elided as
 * `...` — the compact play prompt shows the current state separately, so the observations would only repeat it. A
 * step marked refused shows its action followed by REFUSED_MARK.
 */
export function formatTrajectory(steps: readonly TrajectoryStep[], format: TrajectoryFormat): string {
  const window = Math.max(0, format.window ?? DEFAULT_WINDOW);
  const firstShown = Math.max(0, steps.length - window);
  if (format.style === 'compact') {
    const shown = steps.slice(firstShown).map((s) => oneLine(s.action) + (s.refused === true ? REFUSED_MARK.compact : ''));
    return (firstShown > 0 ? ['...', ...shown] : shown).join(' ; ');
  }
  return steps
    .map((s, i) => {
      const obs = i < firstShown ? '...' : s.observation;
      return `Step ${i + 1}: action: ${oneLine(s.action)}${s.refused === true ? REFUSED_MARK.full : ''}\nObservation:\n${obs}`;
    })
    .join('\n');
}

export interface MemoryBlockInput {
  style: PromptStyle;
  mode: MemoryMode;
  /** 0-based index k of the earlier episode this block describes. */
  episode: number;
  reflection?: string;
  steps?: readonly TrajectoryStep[];
  window?: number;
  compactObservation?: CompactObservation;
}

/** One memory block H(n) entry for an earlier, failed episode k (SPEC §2 memory modes). */
export function formatMemoryBlock(input: MemoryBlockInput): string {
  const k = input.episode + 1;
  const reflection = input.reflection ?? '';
  const steps = input.steps ?? [];
  const withHistory = input.mode !== 'reflection_only';
  const withReflection = input.mode !== 'history_only';
  if (input.style === 'compact') {
    const parts = [`T${k} fail`];
    if (withHistory) parts.push(`acts: ${formatTrajectory(steps, { style: 'compact', window: input.window })}`);
    if (withReflection) parts.push(`note: ${oneLine(reflection)}`);
    return parts.join(' ');
  }
  const lines: string[] = [];
  if (withHistory) {
    lines.push(`On trial #${k} you took these steps:`);
    lines.push(steps.length > 0 ? formatTrajectory(steps, { style: 'full', window: input.window }) : '(no steps)');
  }
  if (withReflection) {
    lines.push(`On trial #${k} the task was NOT completed. Your reflection was: ${reflection}`);
  } else {
    lines.push(`On trial #${k} the task was NOT completed.`);
  }
  return lines.join('\n');
}

export interface PlayPromptParts {
  input: PlayPromptInput;
  /** Full style: role, symbols, goal and rules. */
  rules: string;
  /** Full style: how to answer (reason, then the action inside <action>...</action>). */
  answerFormat: string;
  /** Compact style: a short name for the environment that opens the line, e.g. `sok`. */
  compactTag: string;
  compactObservation?: CompactObservation;
}

/** An environment that builds its prompts here has no LaMer templates of its own to fill. */
function refusePaper(style: PromptStyle): void {
  if (style === 'paper') {
    throw new LamerError('E_ENV', "promptStyle 'paper' (LaMer's templates) is not available for this environment; use 'full' or 'compact'");
  }
}

/**
 * What the prompt's end says of a refused last action (PlayPromptInput.refusedLast): the action itself, '' for the
 * flag alone, or null (the last action was accepted, or the option is off).
 */
function lastRefused(input: PlayPromptInput): string | null {
  const last = input.steps.at(-1);
  if (!input.refusedLast || last?.refused !== true) return null;
  return input.refusedLast === 'flag' ? '' : last.action;
}

/** The play prompt of SPEC §2 in the requested style. */
export function composePlayPrompt(parts: PlayPromptParts): string {
  const { input } = parts;
  refusePaper(input.style);
  const squeeze = parts.compactObservation ?? joinLines;
  const current = input.steps.length > 0 ? input.steps[input.steps.length - 1].observation : input.initial.text;
  if (input.style === 'compact') {
    const fields = [`${parts.compactTag} ${trialLine(input.episode, 'compact')}`];
    if (input.memory.length > 0) fields.push(`mem: ${input.memory.map(oneLine).join(' ; ')}`);
    if (input.steps.length > 0) {
      fields.push(`acts: ${formatTrajectory(input.steps, { style: 'compact', window: input.window })}`);
    }
    fields.push(`now: ${squeeze(current)}`);
    const refused = lastRefused(input);
    if (refused !== null) fields.push(refused === '' ? 'no' : `${refused} no`);
    fields.push('act:');
    return fields.join(' | ');
  }
  const sections = [parts.rules.trim(), `Initial state:\n${input.initial.text}`];
  if (input.memory.length > 0) {
    sections.push(`Memory of your earlier trials on this same task:\n${input.memory.join('\n\n')}`);
  }
  const trajectory =
    input.steps.length > 0
      ? `You have taken ${input.steps.length} step(s) in this trial. Your actions and the observations that followed` +
        ` (older observations are shown as ...):\n` +
        formatTrajectory(input.steps, { style: 'full', window: input.window })
      : 'You have not taken any action in this trial yet.';
  sections.push(`${trialLine(input.episode, 'full')} ${trajectory}`);
  sections.push(`Current state:\n${current}`);
  const refused = lastRefused(input);
  if (refused !== null) sections.push(refused === '' ? 'Your last action was refused.' : `Your last action, ${refused}, was refused.`);
  sections.push(parts.answerFormat.trim());
  return sections.join('\n\n');
}

export interface ReflectPromptParts {
  input: ReflectPromptInput;
  rules: string;
  /** Full style: what a good reflection for this environment names (appended to the generic instruction). */
  reflectHint?: string;
  compactTag: string;
  compactObservation?: CompactObservation;
}

/** The reflect prompt of SPEC §2: rules, initial state, the failed episode, and a request for <remark>...</remark>. */
export function composeReflectPrompt(parts: ReflectPromptParts): string {
  const { input } = parts;
  refusePaper(input.style);
  const squeeze = parts.compactObservation ?? joinLines;
  const last = input.steps.length > 0 ? input.steps[input.steps.length - 1].observation : input.initial.text;
  if (input.style === 'compact') {
    const fields = [`${parts.compactTag} R${input.episode + 1}`, `init: ${squeeze(input.initial.text)}`];
    if (input.steps.length > 0) fields.push(`acts: ${formatTrajectory(input.steps, { style: 'compact' })}`);
    fields.push(`end: ${squeeze(last)}`, 'fail', 'remark:');
    return fields.join(' | ');
  }
  const trajectory =
    input.steps.length > 0
      ? `Your actions and the observations that followed (older observations are shown as ...):\n` + formatTrajectory(input.steps, { style: 'full' })
      : 'You took no action.';
  return [
    parts.rules.trim(),
    `Initial state:\n${input.initial.text}`,
    `This was your trial #${input.episode + 1}. ${trajectory}`,
    `The task was NOT completed.`,
    [
      'Reason about what went wrong in this trial and what you should do differently on the same task next time.',
      parts.reflectHint?.trim() ?? '',
      'End your answer with your reflection and an improved plan inside <remark> and </remark>,',
      'for example: <remark>What went wrong: ... Plan for the next trial: ...</remark>',
    ]
      .filter((s) => s.length > 0)
      .join(' '),
  ].join('\n\n');
}

/** Newlines would break the one-line compact format and the "action:" line of full trajectories. */
function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}
