// What a CLI command prints, for the tests that run commands in-process: console.log and console.error are captured
// while `fn` runs (and restored after), and returned with its exit code.
export async function captured(fn: () => Promise<number>): Promise<{ code: number; out: string; err: string }> {
  const [log, error] = [console.log, console.error];
  const out: string[] = [];
  const err: string[] = [];
  console.log = (...a: unknown[]) => void out.push(a.join(' '));
  console.error = (...a: unknown[]) => void err.push(a.join(' '));
  try {
    return { code: await fn(), out: out.join('\n'), err: err.join('\n') };
  } finally {
    [console.log, console.error] = [log, error];
  }
}
