// Command-line options of the `lamer` subcommands: node's parseArgs, strict, with the command's usage on errors.
import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;
/** What parseArgs returns for `options` (named, so the compiled declarations can spell it). */
type Parsed<O extends Options, Positionals extends boolean> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: Positionals }>
>;

/** The candidate nearest to `word` (edit distance at most 2, or a third of a long word; or a unique prefix). */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const distance = (a: string, b: string): number => {
    let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      const cur = [i];
      for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
    return prev[b.length];
  };
  const prefixed = candidates.filter((c) => word.length >= 2 && c.startsWith(word));
  if (prefixed.length === 1) return prefixed[0];
  let best: string | undefined;
  let bestDistance = word.length >= 4 ? Math.max(2, Math.floor(word.length / 3)) : 1;
  for (const c of candidates) {
    const d = distance(word, c);
    if (d <= bestDistance && (best === undefined || d < distance(word, best))) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

/** What was wrong with the command line, with a suggestion for a mistyped option. */
function explain(e: unknown, options: Options): string {
  const message = (e as Error).message;
  const unknown = /Unknown option '(-{1,2}[^']+)'/.exec(message);
  if (unknown) {
    const guess = closest(unknown[1].replace(/^-+/, ''), Object.keys(options));
    if (guess) return `${message}; did you mean '--${guess}'?`;
  }
  return message;
}

/** The parsed option values, or undefined after printing what was wrong and the usage (exit code 2). */
export function parseCommandArgs<O extends Options>(command: string, usage: string, argv: string[], options: O): Parsed<O, false>['values'] | undefined {
  try {
    return parseArgs({ args: argv, options, strict: true }).values;
  } catch (e) {
    console.error(`lamer ${command}: ${explain(e, options)}\n\n${usage}`);
    return undefined;
  }
}

/** As parseCommandArgs, for commands that also take operands (e.g. run folders): the values and the operands. */
export function parseCommandLine<O extends Options>(command: string, usage: string, argv: string[], options: O): Parsed<O, true> | undefined {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: true });
  } catch (e) {
    console.error(`lamer ${command}: ${explain(e, options)}\n\n${usage}`);
    return undefined;
  }
}

/**
 * A list of seeds: ranges and single seeds separated by commas ("0-4", "0,2,7", "0-2,9"), in the order given without
 * repeats; undefined when the text is not such a list.
 */
export function parseSeedList(spec: string): number[] | undefined {
  const seeds: number[] = [];
  for (const part of spec.split(',')) {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
    if (!m) return undefined;
    const [from, to] = [Number(m[1]), Number(m[2] ?? m[1])];
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || to < from || to - from >= 10_000) return undefined;
    for (let s = from; s <= to; s++) if (!seeds.includes(s)) seeds.push(s);
  }
  return seeds;
}
