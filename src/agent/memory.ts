// Inter-episode memory H(n) of one trial (SPEC §2): what the agent carries from its failed episodes into the next
// one. The block text itself is shared with every environment (`formatMemoryBlock` in envs/common/framing.ts); this
// file decides which episodes and which parts (trajectory, reflection) go in, per memory mode.

import { LamerError } from '../errors.js';
import { formatMemoryBlock, type MemoryMode } from '../envs/common/framing.js';
import type { PastEpisode, PromptStyle, TrajectoryStep } from '../envs/types.js';

export type { MemoryMode } from '../envs/common/framing.js';

export const MEMORY_MODES: readonly MemoryMode[] = Object.freeze(['reflection_only', 'history_only', 'history_and_reflection']);

/** The paper's best ablation and the project default: reflections are shorter than trajectories and help more. */
export const DEFAULT_MEMORY_MODE: MemoryMode = 'reflection_only';

export function isMemoryMode(value: unknown): value is MemoryMode {
  return typeof value === 'string' && (MEMORY_MODES as readonly string[]).includes(value);
}

/** Whether a mode shows reflections; a mode that does not has no use for a reflection phase. */
export function memoryUsesReflection(mode: MemoryMode): boolean {
  return mode !== 'history_only';
}

export interface TrialMemoryOptions {
  mode?: MemoryMode;
  style: PromptStyle;
  /** Trajectory window for history blocks (default: the framing's window of 7 steps). */
  window?: number;
}

type FailedEpisode = PastEpisode;

/** H(n) of one trial: one record per earlier failed episode, formatted as blocks on demand. */
export class TrialMemory {
  readonly mode: MemoryMode;
  readonly style: PromptStyle;
  readonly window: number | undefined;
  private readonly failed: FailedEpisode[] = [];

  constructor(options: TrialMemoryOptions) {
    const mode = options.mode ?? DEFAULT_MEMORY_MODE;
    if (!isMemoryMode(mode)) {
      throw new LamerError('E_ARG', `memory mode ${JSON.stringify(mode)}: expected one of ${MEMORY_MODES.join(', ')}`);
    }
    this.mode = mode;
    this.style = options.style;
    this.window = options.window;
  }

  /** Number of episodes remembered. */
  get length(): number {
    return this.failed.length;
  }

  /** Records a failed episode's trajectory; episodes must be added in order, each once. */
  addFailedEpisode(episode: number, steps: readonly TrajectoryStep[]): void {
    const last = this.failed[this.failed.length - 1];
    if (last !== undefined && episode <= last.episode) {
      throw new LamerError('E_ARG', `TrialMemory: episode ${episode} added after episode ${last.episode}`);
    }
    this.failed.push({ episode, steps: steps.slice(), reflection: '' });
  }

  /** Attaches the reflection written after the most recently added episode (empty text for an invalid reflection). */
  setReflection(text: string): void {
    const last = this.failed[this.failed.length - 1];
    if (last === undefined) throw new LamerError('E_ARG', 'TrialMemory.setReflection: no failed episode recorded yet');
    last.reflection = text;
  }

  /** The reflections in episode order (for logs). */
  reflections(): string[] {
    return this.failed.map((f) => f.reflection);
  }

  /** The remembered episodes, oldest first: `paper` prompts format their own blocks from them. */
  past(): PastEpisode[] {
    return this.failed.map((f) => ({ episode: f.episode, steps: f.steps, reflection: f.reflection }));
  }

  /**
   * The memory blocks H(n) shown in the next play prompt: one per remembered episode (in the `full` form for the
   * `paper` style, whose environments build LaMer's blocks from `past()` instead).
   */
  blocks(): string[] {
    return this.failed.map((f) =>
      formatMemoryBlock({
        style: this.style,
        mode: this.mode,
        episode: f.episode,
        reflection: f.reflection,
        steps: f.steps,
        window: this.window,
      }),
    );
  }
}
