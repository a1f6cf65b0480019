// Public API of evaluation: pass@k, the held-out evaluation run, the methods' trial modes, the table printer, and the
// paired comparisons within a run and across runs (seeds).
export { passAtK } from './passk.js';
export type { PassAtK, TaskOutcome } from './passk.js';
export { SELECT_SEED_INDEX, evalTaskSeeds, evaluate } from './evaluate.js';
export type { EvalResult, EvalSplit, EvaluateOptions, ReflectionChecks, ReflectionSource } from './evaluate.js';
export { trialTranscripts } from './transcripts.js';
export type { TrialTranscript, TranscriptEpisode, TranscriptReflection, TranscriptTurn } from './transcripts.js';
export { CHANCE_METHODS, METHODS, TRAINED_METHODS, evalTrialMode, isChanceMethod, isMethod, trainRolloutShape } from './methods.js';
export type { Method, MethodTrialMode, TrainRolloutShape } from './methods.js';
export { formatPassAtKTable } from './table.js';
export type { PassAtKRow } from './table.js';
export { compareMethods, compareWithFirst, formatComparison } from './compare.js';
export type { CompareOptions, Interval, PairedComparison } from './compare.js';
export { compareRuns, formatRunsComparison, runsInterval, studentTCdf, studentTQuantile } from './across-runs.js';
export type { CompareRunsOptions, MethodAcrossRuns, PairAcrossRuns, RunEvaluation, RunsComparison, RunsInterval } from './across-runs.js';
