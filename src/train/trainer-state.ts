// The trainer's state in a checkpoint (trainer.json) and what a resumed run checks it against. A checkpoint records the
// iteration it holds, the method and seed that trained it, whether that iteration's evaluation was still owed (an
// interrupt cut it short), and the model: a content hash of the base the config named (model.path, its adapter's
// base, model.adapter, or the created model's model.init), the LoRA settings, and a hash of every file the checkpoint
// was saved to. A resumed run refuses a checkpoint whose files changed since they were saved (E_CHECKPOINT) and a
// config that describes another model than the one trained (E_CONFIG, naming the field and both hashes): the
// checkpoint's weights would otherwise train on while config.json recorded the new settings. Starting the run over
// (`--force`) is the way past either. Every reader of trainer.json (resume, re-scoring) goes through readTrainerState.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, isAbsolute, join, resolve } from 'node:path';
import { LamerError } from '../errors.js';
import { adapterBaseModel, isAdapterDir } from '../model/policy.js';
import { jsonDepth, MAX_JSON_DEPTH, readRegularFile } from '../util/fs.js';
import { sha256, sha256OfFile } from '../util/hash.js';
import { runSeeds, type TrainerConfig } from './config.js';

/** The trainer's state in a checkpoint. */
export const STATE_FILE = 'trainer.json';
/** The run's config as it was when the checkpoint was saved (beside the state; not one of the model's files). */
export const RUN_CONFIG_FILE = 'config.json.run';

/** The largest trainer.json read (its file list grows with ZeRO shards; far below this). */
const STATE_MAX_BYTES = 4 * 2 ** 20;

/** One part of the base a run starts from: the config field that names it and a hash of its content. */
export interface BasePart {
  field: 'model.path' | 'model.path base' | 'model.init' | 'model.adapter';
  sha256: string;
}

/** The LoRA settings that shape the trained adapter (alpha resolved: null is 2 r). */
export interface LoraShape {
  r: number;
  alpha: number;
  targets: string | string[];
  rslora: boolean;
}

/** The model a config describes: the base it starts from and the LoRA settings, and a hash of the two together. */
export interface ModelIdentity {
  sha256: string;
  base: BasePart[];
  lora: LoraShape | null;
}

/** What a checkpoint records of its model: the identity, and each file it was saved to with its hash. */
export interface ModelRecord extends ModelIdentity {
  files: Record<string, string>;
}

export interface TrainerState {
  /** Iterations completed (the checkpoint folder's number). */
  iteration: number;
  method: string;
  seed: number;
  /** The evaluation due after `iteration` was cut short: a resumed run runs it before the next iteration. */
  evalPending?: boolean;
  model?: ModelRecord;
}

const HEX64 = /^[0-9a-f]{64}$/;
const short = (h: string) => h.slice(0, 12);

function isRecordOfHashes(v: unknown): v is Record<string, string> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && Object.values(v).every((h) => typeof h === 'string' && HEX64.test(h));
}

function isModelRecord(v: unknown): v is ModelRecord {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const m = v as Record<string, unknown>;
  const baseOk =
    Array.isArray(m.base) &&
    m.base.every((p) => p !== null && typeof p === 'object' && typeof (p as BasePart).field === 'string' && HEX64.test(String((p as BasePart).sha256)));
  const lora = m.lora as LoraShape | null | undefined;
  const loraOk =
    lora === null ||
    (lora !== undefined &&
      typeof lora === 'object' &&
      Number.isInteger(lora.r) &&
      typeof lora.alpha === 'number' &&
      typeof lora.rslora === 'boolean' &&
      (typeof lora.targets === 'string' || Array.isArray(lora.targets)));
  return typeof m.sha256 === 'string' && HEX64.test(m.sha256) && baseOk && loraOk && isRecordOfHashes(m.files);
}

/** A count: a whole number from 0 up to the largest exact integer. */
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

/**
 * The trainer state of checkpoint folder `dir`, checked: E_CHECKPOINT naming the file when it is missing, not a
 * regular file, not JSON, nested deeper than MAX_JSON_DEPTH, or holds an iteration that is not a count or not the
 * checkpoint folder's own number.
 */
export function readTrainerState(dir: string): TrainerState {
  const path = join(dir, STATE_FILE);
  const text = readRegularFile(path, 'E_CHECKPOINT', STATE_MAX_BYTES);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new LamerError('E_CHECKPOINT', `${path}: the checkpoint's trainer state is not valid JSON (${(e as Error).message.slice(0, 120)})`, {
      cause: e,
    });
  }
  const bad = (what: string) => new LamerError('E_CHECKPOINT', `${path}: ${what}; this is not a trainer state this program wrote`);
  // The messages below quote values (JSON.stringify), which recurses once per level of nesting.
  if (jsonDepth(text) > MAX_JSON_DEPTH) throw bad(`arrays and objects nested more than ${MAX_JSON_DEPTH} deep`);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw bad('expected a JSON object');
  const s = raw as Record<string, unknown>;
  if (!isCount(s.iteration)) throw bad(`'iteration' must be a count of completed iterations (a whole number >= 0), found ${JSON.stringify(s.iteration)}`);
  if (typeof s.method !== 'string') throw bad(`'method' must be a method name, found ${JSON.stringify(s.method)}`);
  if (!Number.isSafeInteger(s.seed)) throw bad(`'seed' must be a whole number, found ${JSON.stringify(s.seed)}`);
  if (s.evalPending !== undefined && typeof s.evalPending !== 'boolean')
    throw bad(`'evalPending' must be true or false, found ${JSON.stringify(s.evalPending)}`);
  if (s.model !== undefined && !isModelRecord(s.model)) throw bad("'model' is not a record of the model's hashes");
  const named = /^ckpt-(\d+)$/.exec(basename(dir));
  if (named && Number(named[1]) !== s.iteration) {
    throw new LamerError(
      'E_CHECKPOINT',
      `${path}: records iteration ${s.iteration as number}, but its folder ${basename(dir)} holds iteration ${Number(named[1])}; the state was copied from another checkpoint`,
    );
  }
  return {
    iteration: s.iteration,
    method: s.method,
    seed: s.seed as number,
    ...(s.evalPending !== undefined ? { evalPending: s.evalPending } : {}),
    ...(s.model !== undefined ? { model: s.model as ModelRecord } : {}),
  };
}

/**
 * The regular files at the top of folder `dir` (hidden ones and subfolders left out; symbolic links followed, as a
 * Hugging Face cache's snapshot folder links its files), with their hashes; E_CONFIG naming `field` when it cannot be
 * read.
 */
async function folderHash(dir: string, field: string): Promise<string> {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch (e) {
    throw new LamerError('E_CONFIG', `${field} ${dir}: cannot read the folder (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const lines: string[] = [];
  for (const name of names) {
    if (name.startsWith('.')) continue;
    const path = join(dir, name);
    let file: boolean;
    try {
      file = statSync(path).isFile();
    } catch {
      continue; // a dangling link
    }
    if (file) lines.push(`${name}\0${await sha256OfFile(path)}`);
  }
  return sha256(lines.join('\n'));
}

/** The model `config` describes: a content hash of each part of its base, and its LoRA settings. */
export async function modelIdentity(config: TrainerConfig): Promise<ModelIdentity> {
  const { path, init, lora, adapter } = config.model;
  const base: BasePart[] = [];
  const initPart = (): BasePart => ({
    field: 'model.init',
    sha256: sha256(JSON.stringify({ preset: init.preset, tokenizer: init.tokenizer, seed: runSeeds(config).init })),
  });
  if (path !== undefined) {
    const root = resolve(path);
    base.push({ field: 'model.path', sha256: await folderHash(root, 'model.path') });
    if (isAdapterDir(root)) {
      // An adapter's base: the folder it names (relative to the adapter), or the preset when it names none.
      const named = adapterBaseModel(root);
      if (named === null) base.push(initPart());
      else {
        const dir = isAbsolute(named) ? named : resolve(root, named);
        if (existsSync(dir)) base.push({ field: 'model.path base', sha256: await folderHash(dir, 'the base of model.path') });
      }
    }
  } else {
    base.push(initPart());
  }
  if (adapter !== null) base.push({ field: 'model.adapter', sha256: await folderHash(resolve(adapter), 'model.adapter') });
  const shape: LoraShape | null = lora && { r: lora.r, alpha: lora.alpha ?? 2 * lora.r, targets: lora.targets, rslora: lora.rslora };
  return { sha256: sha256(JSON.stringify({ base, lora: shape })), base, lora: shape };
}

/**
 * Every regular file under checkpoint folder `dir` but the state and run config beside them (relative paths, `/`
 * separated), with its hash: what a checkpoint records at save and a resumed run compares.
 */
export async function checkpointFileHashes(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (sub: string) => {
    for (const entry of readdirSync(join(dir, sub), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const rel = sub ? `${sub}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await walk(rel);
      else if (entry.isFile() && rel !== STATE_FILE && rel !== RUN_CONFIG_FILE) out[rel] = await sha256OfFile(join(dir, rel));
      else if (!entry.isFile() && !entry.isDirectory()) out[rel] = sha256(`not a regular file: ${entry.name}`);
    }
  };
  await walk('');
  return out;
}

const show = (v: unknown) => JSON.stringify(v);

/**
 * Checks checkpoint `dir` (its state `state`) against what it recorded at save and against the model `config`
 * describes. Throws E_CHECKPOINT when a file of the checkpoint changed, went missing or was added, or when the state
 * records no model; E_CONFIG naming each config field that describes another model, with the model's hash recorded
 * at save and the one the config gives now. Starting the run over (`--force`) is the way past either.
 */
export async function checkResumedModel(dir: string, state: TrainerState, config: TrainerConfig, now: ModelIdentity): Promise<void> {
  const path = join(dir, STATE_FILE);
  const over = 'resume with the config the checkpoint was trained with, or start the run over with --force';
  const saved = state.model;
  if (!saved) {
    throw new LamerError(
      'E_CHECKPOINT',
      `${path}: records no model (no hash of its files or of the base it was trained from), so resuming could not tell whether it continues the model it saved; start the run over with --force`,
    );
  }
  const files = await checkpointFileHashes(dir);
  const changed: string[] = [];
  for (const [name, hash] of Object.entries(saved.files)) {
    const have = files[name];
    if (have === undefined) changed.push(`${join(dir, name)} is missing (sha256 ${short(hash)} at save)`);
    else if (have !== hash) changed.push(`${join(dir, name)} changed since it was saved (sha256 ${short(hash)} at save, sha256 ${short(have)} now)`);
  }
  for (const name of Object.keys(files)) if (!(name in saved.files)) changed.push(`${join(dir, name)} was not part of the checkpoint when it was saved`);
  if (changed.length > 0) throw new LamerError('E_CHECKPOINT', `cannot resume ${dir}: ${changed.join('; ')}; ${over}`);
  if (saved.sha256 === now.sha256) return;
  const fields: string[] = [];
  const was = saved.lora;
  const is = now.lora;
  if ((was === null) !== (is === null)) {
    fields.push(`model.lora: ${show(is)} in the config, ${show(was)} when the checkpoint was saved`);
  } else if (was && is) {
    for (const key of ['r', 'alpha', 'targets', 'rslora'] as const) {
      if (show(was[key]) !== show(is[key])) fields.push(`model.lora.${key}: ${show(is[key])} in the config, ${show(was[key])} when the checkpoint was saved`);
    }
  }
  const where = (parts: BasePart[]) => new Map(parts.map((p) => [p.field, p.sha256]));
  const before = where(saved.base);
  const after = where(now.base);
  for (const field of new Set([...before.keys(), ...after.keys()])) {
    const a = before.get(field);
    const b = after.get(field);
    if (a === b) continue;
    const named =
      field === 'model.adapter' ? ` ${config.model.adapter}` : field.startsWith('model.path') && config.model.path ? ` ${resolve(config.model.path)}` : '';
    if (a === undefined) fields.push(`${field}${named} is part of the base in the config (sha256 ${short(b!)}), not when the checkpoint was saved`);
    else if (b === undefined) fields.push(`${field} was part of the base when the checkpoint was saved (sha256 ${short(a)}), not in the config`);
    else fields.push(`${field}${named}: the content is sha256 ${short(b)} now, ${short(a)} when the checkpoint was saved`);
  }
  throw new LamerError(
    'E_CONFIG',
    `cannot resume ${dir}: the config describes another model than the one this checkpoint trained (model sha256 ${short(saved.sha256)} at save, ` +
      `sha256 ${short(now.sha256)} from the config): ${fields.join('; ') || 'the base differs'}; ${over}`,
  );
}
