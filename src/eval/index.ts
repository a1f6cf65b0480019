// Public API of evaluation: pass@k, the held-out evaluation run, the methods' trial modes, and the table printer.
export { passAtK } from './passk.js';
export type { PassAtK, TaskOutcome } from './passk.js';
export { evalTaskSeeds, evaluate } from './evaluate.js';
export type { EvalResult, EvaluateOptions } from './evaluate.js';
export { METHODS, TRAINED_METHODS, evalTrialMode, isMethod, trainRolloutShape } from './methods.js';
export type { Method, MethodTrialMode, TrainRolloutShape } from './methods.js';
export { formatPassAtKTable } from './table.js';
export type { PassAtKRow } from './table.js';
