// Waiting on a promise under an AbortSignal: the wait ends when the signal aborts, whether or not the promise does.

/** The abort reason as an Error the caller can recognise (`name === 'AbortError'` for a plain `abort()`). */
function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The rollout was aborted', 'AbortError');
}

/** Resolves like `promise`, or rejects as soon as `signal` aborts, so a policy that ignores the signal cannot hang us. */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) {
    promise.catch(() => {}); // the policy may still fail later; nobody is waiting for it
    return Promise.reject(abortReason(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      promise.catch(() => {});
      reject(abortReason(signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
