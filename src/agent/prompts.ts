// Prompt assembly for the agent: the environment builds the play and reflect prompts (SPEC §2); the agent chooses
// the prompting variant. `react` is the environment's own prompt (reason, then act). `zero-shot` asks for the action
// directly: in the full style the answer-format paragraph's "First reason ... Then give" is turned into "Do not write
// any reasoning. Give"; the compact style already asks for the bare action.

import type { Environment, MemoryMode, Observation, PastEpisode, PromptStyle, RefusedLast, TrajectoryStep } from '../envs/types.js';

export const PROMPT_VARIANTS = ['react', 'zero-shot'] as const;
export type PromptVariant = (typeof PROMPT_VARIANTS)[number];

export function isPromptVariant(value: unknown): value is PromptVariant {
  return typeof value === 'string' && (PROMPT_VARIANTS as readonly string[]).includes(value);
}

/** Every environment's answer format opens with a reasoning request ending in "... Then give ...". */
const REASON_THEN_ACT = /^First reason[\s\S]*?\.\s+Then give/;

const ZERO_SHOT_NOTE = 'Reply with the <action>...</action> tag only.';

/**
 * The zero-shot form of a full-style play prompt: the reasoning request in the last paragraph (the answer format)
 * is replaced by an instruction to answer directly. When an environment words its answer format differently, the
 * instruction is appended instead, so the variant never silently equals `react`.
 */
export function toZeroShot(playPrompt: string, style: PromptStyle): string {
  if (style === 'compact') return playPrompt;
  const cut = playPrompt.lastIndexOf('\n\n');
  const head = cut < 0 ? '' : playPrompt.slice(0, cut + 2);
  const format = cut < 0 ? playPrompt : playPrompt.slice(cut + 2);
  const direct = format.replace(REASON_THEN_ACT, 'Do not write any reasoning. Give');
  if (direct !== format) return `${head}${direct} ${ZERO_SHOT_NOTE}`;
  return `${playPrompt}\n\nDo not write any reasoning. ${ZERO_SHOT_NOTE}`;
}

export interface AgentPlayPromptInput {
  style: PromptStyle;
  variant: PromptVariant;
  initial: Observation;
  memory: string[];
  /** The earlier failed episodes behind `memory` (for `paper` prompts). */
  past?: readonly PastEpisode[];
  memoryMode?: MemoryMode;
  episode: number;
  steps: readonly TrajectoryStep[];
  window?: number;
  /** Name a refused last action again at the prompt's end (PlayPromptInput.refusedLast). */
  refusedLast?: RefusedLast;
}

export function agentPlayPrompt(env: Environment, input: AgentPlayPromptInput): string {
  const prompt = env.playPrompt({
    style: input.style,
    initial: input.initial,
    memory: input.memory,
    past: input.past ?? [],
    memoryMode: input.memoryMode,
    episode: input.episode,
    steps: input.steps.slice(),
    window: input.window,
    refusedLast: input.refusedLast,
  });
  return input.variant === 'zero-shot' ? toZeroShot(prompt, input.style) : prompt;
}

export interface AgentReflectPromptInput {
  style: PromptStyle;
  initial: Observation;
  /** The failed episode's trajectory. */
  steps: readonly TrajectoryStep[];
  episode: number;
}

export function agentReflectPrompt(env: Environment, input: AgentReflectPromptInput): string {
  return env.reflectPrompt({
    style: input.style,
    initial: input.initial,
    steps: input.steps.slice(),
    episode: input.episode,
  });
}
