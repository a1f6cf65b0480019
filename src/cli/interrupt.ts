// SIGINT / SIGTERM for commands that save what completed before they stop (`lamer train`, `lamer sft`): the first
// signal aborts the work's AbortSignal (the current step is abandoned, what completed is saved) and the command exits
// 128 + the signal's number (130, 143); a second signal quits at once. It quits by the signal itself: with the
// handlers removed, the signal's default action ends the process without exit()'s static destructors, which would
// tear libtorch down under a worker thread still inside a backward pass (a SIGSEGV). A run's lock stays behind,
// naming a dead process, and --resume takes it over.
import { LamerError } from '../errors.js';

export interface StopSignals {
  /** Aborted by the first SIGINT or SIGTERM, with an E_INTERRUPTED reason. */
  readonly signal: AbortSignal;
  /** The signal received, if any. */
  received(): NodeJS.Signals | undefined;
  /** The exit status for the signal received: 130 (SIGINT), 143 (SIGTERM). */
  status(): number;
  /** Removes the handlers. */
  dispose(): void;
}

/** Installs the handlers; `command` names the command in the line printed on the first signal. */
export function onStopSignals(command: string): StopSignals {
  const controller = new AbortController();
  let received: NodeJS.Signals | undefined;
  const stop = (signal: NodeJS.Signals) => {
    if (received) {
      process.removeAllListeners('SIGINT');
      process.removeAllListeners('SIGTERM');
      process.kill(process.pid, signal);
      return;
    }
    received = signal;
    console.error(`\n${command}: ${signal}: stopping after saving what completed (send it again to quit at once)`);
    controller.abort(new LamerError('E_INTERRUPTED', `interrupted by ${signal}`));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  return {
    signal: controller.signal,
    received: () => received,
    status: () => (received === 'SIGTERM' ? 143 : 130),
    dispose: () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    },
  };
}
