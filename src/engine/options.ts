// The engine's options, declared once: their defaults, ranges and meaning. The Engine reads its options through this
// schema, the config's `rollout.slots` is its `slots` field (one default for the library and `lamer train`), and the
// fields the native engine takes are the native options' own type (the compiler holds the two equal below), with the
// ranges native/engine/binding.cpp checks.
import { z } from 'zod';
import { SLOT_LAYOUTS, type NativeEngineOptions } from '../native/types.js';
import type { Same } from '../util/options.js';

const positiveInt = z.number().int().positive();

/** Sampling settings and row width of the CUDA graphs captured when the engine starts (Engine.precapture). */
export const precaptureSchema = z
  .object({
    columns: positiveInt.describe('longest row captured for (prompt + new tokens)'),
    temperature: z.number().nonnegative().default(1).describe('sampling temperature of the rows (0 is greedy)'),
    topP: z.number().gt(0).max(1).default(1).describe('nucleus cut, in (0, 1] (1: none)'),
    topK: z.number().int().default(0).describe('top-k cut (0 or less: none)'),
  })
  .strict();

export const engineOptionsSchema = z
  .object({
    slots: positiveInt.default(64).describe('rows the generation engine decodes together'),
    tokenBudget: positiveInt.default(131072).describe('KV-cache tokens the live requests may reserve together (prompt + maxNewTokens each)'),
    /**
     * 1 (the CPU's) lets a new request join at the very next step; on a GPU (8) the tokens are read back once per
     * call, so fewer calls mean fewer host synchronisations.
     */
    stepsPerCall: positiveInt.optional().describe("decode steps per native call (default: the device profile's)"),
    prefillTokens: positiveInt.default(8192).describe('padded prompt tokens per prefill forward'),
    /**
     * A prompt that starts like a kept one (the next turn of a multi-turn agent, another trial of the same task)
     * reuses those keys/values and prefills only the rest. Dropped whenever the model's parameters change.
     */
    prefixCacheBytes: z
      .number()
      .int()
      .nonnegative()
      .default(256 * 2 ** 20)
      .describe('bytes of prompt keys/values the prefix cache may keep (0: no prefix cache)'),
    /**
     * One graph per batch-size and width bucket, captured on first use. A capture that fails turns graphs off for
     * this engine and decoding goes on eagerly (`stats().graphError` says why).
     */
    cudaGraphs: z.boolean().default(true).describe('capture decode steps as CUDA graphs and replay them (ignored on the CPU)'),
    /**
     * `packed` (the CPU default): a row moves down into a slot freed below it, and each step decodes exactly the
     * decoding rows. `fixed` (the GPU default, which CUDA graphs need): rows never move, and the rows and attended
     * columns of a step are rounded up to powers of two. Both give the same tokens.
     */
    slotLayout: z.enum(SLOT_LAYOUTS).optional().describe("how decoding rows sit in the KV cache's slots (default: the device profile's)"),
    /** torch's memory-efficient kernel with per-row key lengths (CUDA, compute capability 8+); the CPU always masks. */
    liveAttention: z.boolean().default(true).describe("decode attention reads each row's own live keys/values only, not the step's whole width with a mask"),
    /**
     * Other sampling settings, or longer rows, capture their buckets on first use as without it. Ignored on the CPU.
     */
    precapture: precaptureSchema.optional().describe('capture the CUDA graphs of every bucket when the engine starts, for rows sampling so'),
  })
  .strict();

export type EngineOptions = z.input<typeof engineOptionsSchema>;
export type ResolvedEngineOptions = z.output<typeof engineOptionsSchema>;
export type EnginePrecapture = z.input<typeof precaptureSchema>;

/** The options the scheduler in TS keeps to itself; every other one goes to the native engine as it is. */
export type SchedulerOption = 'tokenBudget' | 'stepsPerCall' | 'precapture';

// The rest are the native engine's options, of the same types (slotLayout's default is the device profile's): a field
// added to one side and not the other does not compile.
const nativeFieldsAreNative: Same<Required<Omit<ResolvedEngineOptions, SchedulerOption>>, NativeEngineOptions> = true;
void nativeFieldsAreNative;
