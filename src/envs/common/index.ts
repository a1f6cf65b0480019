// Helpers shared by all environments: response tags, prompt framing, seed ranges.
export { REMARK_MAX_CHARS, extractAction, extractRemark, extractTag } from './tags.js';
export { DEFAULT_WINDOW, composePlayPrompt, composeReflectPrompt, formatMemoryBlock, formatTrajectory, joinLines, trialLine } from './framing.js';
export type { CompactObservation, MemoryBlockInput, MemoryMode, PlayPromptParts, ReflectPromptParts, TrajectoryFormat } from './framing.js';
export { EVAL_SEEDS, SELECT_SEEDS, TRAIN_SEEDS, contentSplit, contentSplitOfSeed, seedRange, seedSplitOf, taskSeed } from './seeds.js';
export type { ContentSplit } from './seeds.js';
export type { SeedRange, SeedSplit } from './seeds.js';
export { checkSeed, intOption, rejectUnknownOptions } from './options.js';
