// What `lamer report PATH` finds under PATH, kept apart: a run (a folder with metrics.jsonl), a comparison job (a
// folder whose method sub-runs each have metrics.jsonl, and eval.json once it finished), or a folder of either (seeds
// of one job side by side, or unrelated runs). Every value read from a file is checked before it is drawn.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { LamerError } from '../errors.js';
import { readJsonLines } from '../util/fs.js';
import { readTaskSet } from '../eval/evaluate.js';
import type { EvalEvent, IterationEvent, TrainerEvent } from '../train/events.js';

export interface ReadMetrics {
  events: TrainerEvent[];
  /** Lines that did not parse or did not hold a well-formed event (a run killed mid-write, an edited file). */
  skipped: number;
}

const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isString = (v: unknown): v is string => typeof v === 'string';

/** An object's finite numeric fields (undefined when it is not an object or has none). */
function numbersOf(value: unknown): Record<string, number> | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const out = Object.fromEntries(Object.entries(value).filter(([, v]) => isNumber(v))) as Record<string, number>;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The event if it is one the report can draw (with the types it needs), else null. */
function wellFormed(value: unknown): TrainerEvent | null {
  if (!value || typeof value !== 'object') return null;
  const e = value as Record<string, unknown>;
  if (e.type === 'iteration') {
    if (!isString(e.method) || !isNumber(e.iteration)) return null;
    // Numeric fields that are not finite numbers are dropped, so a chart never sees them.
    const clean: Record<string, unknown> = { type: 'iteration', method: e.method, iteration: e.iteration };
    for (const [k, v] of Object.entries(e)) if (isNumber(v)) clean[k] = v;
    const checks = e.reflectionChecks as Record<string, unknown> | undefined;
    if (checks && isNumber(checks.checked) && isNumber(checks.correct)) clean.reflectionChecks = { checked: checks.checked, correct: checks.correct };
    const breakdown = numbersOf(e.breakdown);
    if (breakdown) clean.breakdown = breakdown;
    const agreement = numbersOf(e.agreement);
    if (agreement && ['tokens', 'meanAbs', 'maxAbs', 'k3'].every((k) => k in agreement)) clean.agreement = agreement;
    return clean as unknown as IterationEvent;
  }
  if (e.type === 'eval') {
    if (!isString(e.method) || !isNumber(e.iteration) || !isString(e.env) || !isNumber(e.tasks)) return null;
    if (!Array.isArray(e.passAtK) || e.passAtK.length === 0 || !e.passAtK.every(isNumber)) return null;
    const out: EvalEvent = { type: 'eval', method: e.method, iteration: e.iteration, env: e.env, tasks: e.tasks, passAtK: e.passAtK as number[] };
    const taskSet = readTaskSet(e.taskSet);
    if (taskSet && taskSet.count === e.tasks) out.taskSet = taskSet;
    if (Array.isArray(e.firstWin) && e.firstWin.length === e.tasks && e.firstWin.every((x) => Number.isInteger(x))) out.firstWin = e.firstWin as number[];
    const checks = e.reflectionChecks as Record<string, unknown> | undefined;
    if (checks && isNumber(checks.checked) && isNumber(checks.correct)) out.reflectionChecks = { checked: checks.checked, correct: checks.correct };
    return out;
  }
  return null; // checkpoint and log events are not drawn
}

/** Reads metrics.jsonl of a run folder, keeping the well-formed iteration and evaluation events. */
export function readMetrics(runDir: string): ReadMetrics {
  const path = join(runDir, 'metrics.jsonl');
  if (!existsSync(path)) throw new LamerError('E_IO', `no metrics.jsonl in ${runDir}: is it a run folder?`);
  const events: TrainerEvent[] = [];
  const { values, torn } = readJsonLines(path, 'E_IO');
  let skipped = torn;
  for (const parsed of values) {
    const e = wellFormed(parsed);
    if (e) events.push(e);
    else if (!(parsed && typeof parsed === 'object' && ['checkpoint', 'log'].includes((parsed as { type?: unknown }).type as string))) skipped++;
  }
  return { events, skipped };
}

export interface Run {
  /** The folder, and its name relative to the report's PATH. */
  dir: string;
  name: string;
  events: TrainerEvent[];
  skipped: number;
}

/** One section of the report: a comparison job (its method runs) or a run on its own. */
export interface Section {
  dir: string;
  name: string;
  runs: Run[];
  /** The job's eval.json exists (it finished). */
  finished: boolean;
}

/** Seeds of one job (sections named NAME-seedS with eval.json), for the across-seed summary. */
export interface SeedGroup {
  name: string;
  sections: Section[];
}

const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();
const hasMetrics = (p: string) => existsSync(join(p, 'metrics.jsonl'));

/** The run folders at or under `dir` (at most three levels down), in name order. */
export function findRuns(dir: string, depth = 0): string[] {
  if (hasMetrics(dir)) return [dir];
  if (depth >= 3) return [];
  return readdirSync(dir)
    .sort()
    .map((n) => join(dir, n))
    .filter(isDir)
    .flatMap((p) => findRuns(p, depth + 1));
}

export function discover(path: string): { sections: Section[]; seedGroups: SeedGroup[] } {
  if (!isDir(path)) throw new LamerError('E_IO', `${path} is not a folder (expected a run, a comparison job or a folder of runs)`);
  const runDirs = findRuns(path);
  if (runDirs.length === 0) throw new LamerError('E_IO', `no run folder (with metrics.jsonl) at or under ${path}`);
  const nameOf = (p: string) => relative(path, p) || basename(path);
  // A run whose parent holds eval.json or other method runs is a method of that comparison job.
  const sections = new Map<string, Section>();
  for (const dir of runDirs) {
    const parent = join(dir, '..');
    const inJob = dir !== path && (existsSync(join(parent, 'eval.json')) || runDirs.filter((d) => join(d, '..') === parent).length > 1);
    const jobDir = inJob ? parent : dir;
    let section = sections.get(jobDir);
    if (!section) {
      section = { dir: jobDir, name: nameOf(jobDir), runs: [], finished: existsSync(join(jobDir, 'eval.json')) };
      sections.set(jobDir, section);
    }
    const { events, skipped } = readMetrics(dir);
    section.runs.push({ dir, name: nameOf(dir), events, skipped });
  }
  const list = [...sections.values()];
  const groups = new Map<string, Section[]>();
  for (const s of list) {
    const m = /^(.*)-seed\d+$/.exec(basename(s.dir));
    if (m && s.finished) groups.set(m[1], [...(groups.get(m[1]) ?? []), s]);
  }
  const seedGroups = [...groups.entries()].filter(([, ss]) => ss.length >= 2).map(([name, ss]) => ({ name, sections: ss }));
  return { sections: list, seedGroups };
}
