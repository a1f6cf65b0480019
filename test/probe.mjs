#!/usr/bin/env node
// Hardening probe: feeds lamer hostile inputs and counts how each one ends. Eleven categories: corrupted checkpoints
// (loaded in child processes), bad configs and command lines (the `lamer` CLI), abuses of the Tensor API,
// adversarial agent responses to every environment, path tricks in run names and model paths, LoRA adapters and
// `lamer merge`, optimizer and ZeRO shard files, a run's trainer state and checkpoints/latest on --resume, WebShop's
// data files and ALFWorld game folders, two processes on one run folder or its parent, and SIGINT at each phase of a
// run followed by --resume. Each input ends as
// one of:
//   coded    the call refused it with a LamerError code (CLI: a non-zero exit whose message names an E_ code, a
//            usage error: exit 2 and `lamer CMD: ...` on stderr, or the command's own refusal `lamer CMD: ...` without
//            a stack trace; an exception that reached the top level uncoded, `lamer: ...`, is a crash)
//   correct  it was accepted and that is right (a harmless mutation, a valid step result)
//   crash    a signal, an exception without a code, a hang past its time limit, or memory past the cap
//   silent   it was accepted and should not have been (exit 0 or a load that succeeded on an invalid value, a file
//            written outside runs/)
// and the result is a Markdown table, one row per category, followed by every crash and silent case with what
// reproduces it. Children run under a time limit and a resident-memory cap (polled from /proc), so a regression
// shows up as a row of the table instead of taking the machine down.
//
// usage: npm run probe -- [--quick] [--only LIST] [--jobs N] [--seed N] [--verbose] [--keep]
//   --quick    about 10% of the samples (each category keeps some of each kind of input)
//   --only     comma-separated categories: checkpoints,cli,tensor,env,paths,adapters,optimizer,runstate,data,
//              concurrency,signals (default: all)
//   --jobs     children run at once (default 2)
//   --seed     seed of the random mutations and responses (default 1)
//   --verbose  also list the cases that were refused although harmless and every case's outcome counts by kind
//   --keep     keep the temporary folder (its path is printed) instead of removing it
// Exit status 1 when any case is a crash or silent, else 0. Nothing is written outside one mkdtemp folder, which is
// removed at the end.
import { spawn, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const self = fileURLToPath(import.meta.url);
const bin = join(root, 'bin', 'lamer.js');
const CODE_RE = /\b(E_[A-Z_]+)\b/;

/** A small seeded generator (the tests' LCG), with helpers. */
function rng(seed) {
  let s = seed >>> 0 || 1;
  const next = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
  next.int = (n) => Math.floor(next() * n);
  next.pick = (a) => a[Math.floor(next() * a.length)];
  return next;
}

const errorCode = (e) => {
  const c = e && typeof e === 'object' ? e.code : undefined;
  return typeof c === 'string' && /^E_[A-Z_]+$/.test(c) ? c : undefined;
};
const short = (s, n = 160) => {
  const t = String(s).replace(/\s+/g, ' ').trim();
  return t.length > n ? `${t.slice(0, n - 3)}...` : t;
};

// ------------------------------------------------------------------------------------------------------------------
// Worker mode: `probe.mjs --worker KIND CASES_FILE FROM` runs cases FROM.. of a JSON file in this process and prints
// `S i` before and `R i JSON` after each, so the parent knows which case a dead or stuck child was on.

// --- checkpoint worker: load a folder, then use it (encode, log-probs, chat template, decode).
const workCheckpoint = {
  async setup() {
    const { Policy } = await import('../src/model/policy.ts');
    return { Policy };
  },
  async one({ Policy }, c) {
    let p;
    try {
      p = await Policy.load(c.dir);
      const text = '<|im_start|>user\nopen 2 3, hello<|im_end|>';
      const ids = p.tokenizer ? p.encode(text) : [1, 5, 3];
      const lp = await p.logprobs([ids, [1, 5, 3]]);
      const finite = lp.every((row) => row.every(Number.isFinite)) && lp[0].length === ids.length - 1 && lp[1].length === 2;
      if (p.chatTemplate) p.renderChat([{ role: 'user', content: 'hi' }], { addGenerationPrompt: true });
      if (p.tokenizer) p.decode(ids);
      return { ok: true, finite };
    } catch (e) {
      return { threw: true, code: errorCode(e), name: e?.name, message: short(e?.message ?? e, 300) };
    } finally {
      try {
        p?.dispose();
      } catch {
        // a dispose error is not the load's outcome
      }
    }
  },
};

// --- tensor worker: each case is the body of an async function of (Tensor, T) where T holds helpers.
const workTensor = {
  async setup() {
    const api = await import('../src/index.ts');
    return { api };
  },
  async one({ api }, c) {
    const AsyncFunction = (async () => {}).constructor;
    const fn = new AsyncFunction('Tensor', 'api', c.body);
    try {
      const v = await fn(api.Tensor, api);
      return { ok: true, value: short(describeValue(v), 120) };
    } catch (e) {
      return { threw: true, code: errorCode(e), name: e?.name ?? typeof e, message: short(e?.message ?? e, 300) };
    }
  },
};

function describeValue(v) {
  if (v && typeof v === 'object' && 'shape' in v && 'dtype' in v) {
    try {
      return `Tensor(${JSON.stringify(v.shape)}, ${v.dtype}${v.disposed ? ', disposed' : ''})`;
    } catch (e) {
      return `Tensor(? ${e.message})`;
    }
  }
  if (ArrayBuffer.isView(v)) return `${v.constructor.name}(${v.length})`;
  return typeof v === 'bigint' ? `${v}n` : (JSON.stringify(v) ?? String(v));
}

// --- env worker: each case is `steps` adversarial calls, each timed, from reset(seed); an episode that ends (or a
// call that throws) starts the next one from another seed.
const SLOW_MS = 50;
const workEnv = {
  async setup() {
    const { createEnv } = await import('../src/envs/registry.ts');
    const envs = new Map();
    return { createEnv, envs };
  },
  async one({ createEnv, envs }, c) {
    if (!envs.has(c.env)) envs.set(c.env, createEnv(c.env));
    const env = envs.get(c.env);
    let seed = c.seed;
    env.reset(seed);
    const r = rng(c.seed * 7919 + c.env.length);
    const out = { tried: 0, correct: 0, coded: 0, uncoded: 0, slow: 0, malformed: 0, findings: [] };
    let played = [];
    for (let k = 0; k < c.steps; k++) {
      const { kind, text } = adversarialResponse(r, env);
      const reflect = k % 10 === 9; // every tenth call goes to the reflection parser instead of step()
      const t = performance.now();
      let result;
      let err;
      try {
        result = reflect ? env.parseReflection(text) : env.step(text);
      } catch (e) {
        err = e;
      }
      let ms = performance.now() - t;
      out.tried++;
      const finding = (what, extra = {}) =>
        out.findings.length < 5 &&
        out.findings.push({
          what,
          env: c.env,
          seed,
          step: played.length,
          call: reflect ? 'parseReflection' : 'step',
          kind,
          length: text.length,
          head: text.slice(0, 120),
          ms: Math.round(ms),
          ...extra,
        });
      if (err) {
        if (errorCode(err)) {
          out.coded++;
          finding('coded', { code: errorCode(err), message: short(err.message) });
        } else {
          out.uncoded++;
          finding('uncoded', { name: err?.name, message: short(err?.message ?? err) });
        }
        env.reset((seed += 1_000_003)); // the environment's state is unknown after a throw
        played = [];
        continue;
      }
      if (ms > SLOW_MS) {
        // Re-time on a fresh environment replaying the same episode (a GC pause or the machine's load is no finding).
        for (let again = 0; again < 2 && ms > SLOW_MS; again++) {
          const fresh = createEnv(c.env);
          fresh.reset(seed);
          for (const p of played) if (!p.reflect) fresh.step(p.text);
          const t2 = performance.now();
          try {
            if (reflect) fresh.parseReflection(text);
            else fresh.step(text);
          } catch {
            // timed only
          }
          ms = Math.min(ms, performance.now() - t2);
        }
      }
      if (ms > SLOW_MS) {
        out.slow++;
        finding('slow');
      } else if (!wellFormed(result, reflect)) {
        out.malformed++;
        finding('malformed', { result: short(JSON.stringify(result)) });
      } else out.correct++;
      played.push({ text, reflect });
      if (!reflect && result?.done === true) {
        env.reset((seed += 1_000_003));
        played = [];
      }
    }
    return out;
  },
};

function wellFormed(r, reflect) {
  if (!r || typeof r !== 'object') return false;
  if (reflect) return typeof r.valid === 'boolean';
  return (
    typeof r.reward === 'number' &&
    Number.isFinite(r.reward) &&
    typeof r.valid === 'boolean' &&
    typeof r.done === 'boolean' &&
    typeof r.won === 'boolean' &&
    typeof r.observation?.text === 'string' &&
    typeof r.observation?.anchor === 'string'
  );
}

const TAGS = [
  '<action>',
  '</action>',
  '<ACTION>',
  '</Action>',
  '<action >',
  '<remark>',
  '</remark>',
  '<',
  '>',
  '</',
  '<action></action>',
  '<think>',
  '</think>',
];
const WORDS = [
  'up',
  'down',
  'left',
  'right',
  'search[',
  ']',
  'click[',
  'go to',
  'take',
  'from',
  'put',
  'in/on',
  '(',
  ')',
  ',',
  'buy now',
  'next >',
  '< prev',
  'look',
  'inventory',
  '-1',
  '0',
  '99',
  '1e308',
  'NaN',
  '\n',
  ' ',
  'open',
  'flag',
  'reveal',
  'Infinity',
  '__proto__',
  'constructor',
  'toString',
];

function randText(r, n, lo = 32, span = 95) {
  const a = new Array(n);
  for (let i = 0; i < n; i++) a[i] = String.fromCharCode(lo + r.int(span));
  return a.join('');
}

function randUnicode(r, n) {
  let s = '';
  for (let i = 0; i < n; i++) {
    const k = r.int(5);
    if (k === 0) s += String.fromCharCode(r.int(0x20));
    else if (k === 1)
      s += String.fromCharCode(0xd800 + r.int(0x800)); // lone surrogates
    else if (k === 2) s += String.fromCodePoint(0x1f600 + r.int(80));
    else if (k === 3)
      s += String.fromCharCode(0x300 + r.int(0x70)); // combining marks
    else s += String.fromCharCode(0x80 + r.int(0x3000));
  }
  return s;
}

function mutateText(r, text) {
  const chars = [...text];
  for (let e = 0, n = 1 + r.int(4); e < n; e++) {
    const at = r.int(chars.length + 1);
    const op = r.int(3);
    if (op === 0 && chars.length > 0) chars.splice(Math.min(at, chars.length - 1), 1);
    else if (op === 1) chars.splice(at, 0, String.fromCharCode(32 + r.int(95)));
    else chars.splice(at, 0, r.pick(WORDS));
  }
  return chars.join('');
}

/** One adversarial response and the name of its generator (the name is the reproducer's recipe). */
function adversarialResponse(r, env) {
  const admissible = () => {
    try {
      const a = env.admissibleActions();
      return a.length ? a : ['up'];
    } catch {
      return ['up'];
    }
  };
  const kind = r.int(17);
  switch (kind) {
    case 16: {
      // A rambling command: a search or a click with a long argument, a move with a long object name.
      const n = 100 + r.int(5000);
      const words = [
        'red',
        'shirt',
        'men',
        'women',
        'size',
        'xl',
        'under',
        '$',
        '30',
        'dollars',
        'cotton',
        'pack',
        'of',
        'the',
        'to',
        'drawer',
        'apple',
        '1',
        'countertop',
        'with',
      ];
      const arg = Array.from({ length: n }, () => r.pick(words)).join(' ');
      const verb = r.pick(['search[%]', 'click[%]', 'go to %', 'take % from countertop 1', 'put % in/on drawer 1', 'open %', 'use %']);
      return { kind: `long-command(${verb}, ${n} words)`, text: `<action>${verb.replace('%', arg)}</action>` };
    }
    case 0:
      return { kind: 'random-ascii', text: randText(r, r.int(300)) };
    case 1:
      return { kind: 'random-unicode', text: randUnicode(r, r.int(200)) };
    case 2:
      return { kind: 'admissible', text: `Thinking.\n<action>${r.pick(admissible())}</action>` };
    case 3:
      return { kind: 'mutated-admissible', text: mutateText(r, `<action>${r.pick(admissible())}</action>`) };
    case 4: {
      let s = '';
      for (let i = 0, n = 1 + r.int(8); i < n; i++) s += r.pick(TAGS) + (r.int(2) ? r.pick(WORDS) : '');
      return { kind: 'tag-soup', text: s };
    }
    case 5:
      return { kind: 'long-ascii-then-action', text: randText(r, 5000 + r.int(20000)) + `<action>${r.pick(admissible())}</action>` };
    case 6:
      return { kind: 'blank', text: r.pick(['', ' ', '\n\n', '\t', '<action>', '</action>', '\u0000', '\uFEFF', '\u202E']) };
    case 7: {
      const n = 10_000 + r.int(90_000);
      const unit = r.pick([
        '<action>',
        '<action',
        '</action>',
        '<',
        '(',
        '[',
        'search[',
        'click[',
        'go to ',
        '<remark>',
        '9',
        ' ',
        '\n',
        'a',
        '\\',
        '<action><action>',
      ]);
      const close = r.int(2) ? '</action>' : '';
      return { kind: `repeat(${JSON.stringify(unit)}, ${n})${close ? '+close' : ''}`, text: unit.repeat(n) + close };
    }
    case 8: {
      const n = 10_000 + r.int(90_000);
      const unit = r.pick(['(', '[', ']', ',', ' ', '0', '-', 'a ', 'search[', 'click[', '\u0000', '\u0301']);
      return { kind: `action-of-repeat(${JSON.stringify(unit)}, ${n})`, text: `<action>${unit.repeat(n)}</action>` };
    }
    case 9: {
      const inner = r.pick([
        '-99999999999999999999, 1e308',
        `${'9'.repeat(400)}, 2`,
        '1e309, -0',
        'NaN, NaN',
        '0x10, 0b11',
        '2, 3'.repeat(200),
        '(1,2),(3,4)',
        '1,2,3,4,5,6',
        '-1, -1',
        '4294967296, 4294967297',
      ]);
      return { kind: 'numbers', text: `<action>${r.pick(['open', 'flag', 'reveal', 'click', ''])} ${inner}</action>` };
    }
    case 10: {
      const depth = 1000 + r.int(20_000);
      return { kind: `nested-actions(${depth})`, text: '<action>'.repeat(depth) + 'up' + '</action>'.repeat(depth) };
    }
    case 11:
      return { kind: 'huge-random', text: randText(r, 200_000 + r.int(800_000)) };
    case 12:
      return {
        kind: 'json-ish',
        text: r.pick([
          '{"action": "up"}',
          '[[[[[[[[]]]]]]]]',
          '{"__proto__": {"x": 1}}',
          'null',
          'undefined',
          '<action>{"a":1}</action>',
          '<action>constructor</action>',
          '<action>__proto__</action>',
          '<action>toString</action>',
          '<action>hasOwnProperty</action>',
        ]),
      };
    case 13: {
      const a = r.pick(admissible());
      return {
        kind: 'many-actions',
        text: Array.from({ length: 1 + r.int(500) }, () => `<action>${r.int(3) ? a : r.pick(WORDS)}</action>`).join(r.pick(['', '\n', ' '])),
      };
    }
    case 14: {
      const n = 1000 + r.int(50_000);
      return { kind: `reflection-like(${n})`, text: `<remark>${randText(r, n)}</remark>` + (r.int(2) ? '<remark>' : '') };
    }
    default: {
      let s = '<action>';
      for (let i = 0, n = r.int(10); i < n; i++) s += r.pick(WORDS) + (r.int(2) ? ' ' : '');
      return { kind: 'word-salad', text: s + (r.int(5) ? '</action>' : '') };
    }
  }
}

// --- fixture worker: builds what the adapter and optimizer categories mutate (a base with a LoRA adapter, and ZeRO
// optimizer saves of a tiny policy after steps 1 and 2), so the parent can mutate copies of it.
const workFixture = {
  async setup() {
    const { Policy } = await import('../src/model/policy.ts');
    const { presetCheckpoint } = await import('../src/model/presets.ts');
    const { Optimizer } = await import('../src/train/optimizer.ts');
    const { tinyPolicy } = await import('./native/train/step-helpers.ts');
    return { Policy, presetCheckpoint, Optimizer, tinyPolicy };
  },
  async one({ Policy, presetCheckpoint, Optimizer, tinyPolicy }, c) {
    if (c.what === 'adapter') {
      const preset = await presetCheckpoint('tiny', 'compact');
      const policy = await Policy.init(preset.config, { seed: 1, assets: preset.assets });
      await policy.save(c.base);
      // Non-zero B (lora_B starts at zero): the adapter changes the model, so a merged output can be told from the base.
      await policy.addLora({ r: 2, alpha: 4, dropout: 0, targets: ['q_proj', 'v_proj'], seed: 3 });
      const opt = Optimizer.create(policy, { lr: 5e-2 });
      await opt.trainStep(optimizerRows(1), { microBatchTokens: 16 });
      opt.dispose();
      await policy.saveAdapter(c.adapter, { baseModel: c.base });
      policy.dispose();
      return { ok: true };
    }
    // Optimizer saves: one rank at stage 1 after steps 1 and 2, a stage-0 save, and a LoRA policy's stage-0 save.
    const save = async (stage, steps, path, lora = false) => {
      const policy = await tinyPolicy(11);
      if (lora) await policy.addLora({ r: 2, alpha: 4, dropout: 0, targets: 'all-linear', seed: 3 });
      const opt = Optimizer.create(policy, { lr: 1e-2, zero: stage });
      for (const [k, p] of steps.entries()) {
        await opt.trainStep(optimizerRows(k + 1), { microBatchTokens: 16 });
        if (p) await opt.save(p);
      }
      opt.dispose();
      policy.dispose();
    };
    await save(1, [join(c.dir, 's1.safetensors'), join(c.dir, 's2.safetensors')]);
    await save(0, [null, join(c.dir, 'stage0.safetensors')]);
    await save(0, [join(c.dir, 'lora0.safetensors')], undefined, true);
    return { ok: true };
  },
};

/** Train rows for the tiny policy's optimizer steps (step k draws its own). */
function optimizerRows(step) {
  const r = rng(5 + 17 * step);
  const ids = (n) => Array.from({ length: n }, () => r.int(50));
  return Array.from({ length: 6 }, (_, i) => {
    const response = ids(2 + ((i * 5) % 7));
    return { prompt: ids(3 + ((i * 3) % 5)), response, advantage: r() * 2 - 1, oldLogprobs: Float32Array.from(response, () => -3 - r()) };
  });
}

// --- adapter worker: the base loaded, the (mutated) adapter loaded on it, then log-probs.
const workAdapter = {
  async setup() {
    const { Policy } = await import('../src/model/policy.ts');
    return { Policy };
  },
  async one({ Policy }, c) {
    let p;
    try {
      p = await Policy.load(c.base, { device: 'cpu', dtype: 'float32', paramDtype: 'float32' });
      await p.loadAdapter(c.dir);
      const lp = await p.logprobs([[1, 5, 3, 9, 2]]);
      return { ok: true, finite: lp.every((row) => row.every(Number.isFinite)) };
    } catch (e) {
      return { threw: true, code: errorCode(e), name: e?.name, message: short(e?.message ?? e, 300) };
    } finally {
      try {
        p?.dispose();
      } catch {
        // a dispose error is not the load's outcome
      }
    }
  },
};

// --- optimizer worker: a (mutated) optimizer state loaded at a ZeRO stage into the policy it was saved from, then one
// more step; the result says the step count read and whether the parameters stay finite.
const workOptimizer = {
  async setup() {
    const { Optimizer } = await import('../src/train/optimizer.ts');
    const { tinyPolicy } = await import('./native/train/step-helpers.ts');
    return { Optimizer, tinyPolicy };
  },
  async one({ Optimizer, tinyPolicy }, c) {
    const policy = await tinyPolicy(11);
    const opt = Optimizer.create(policy, { lr: 1e-2, zero: c.stage });
    try {
      await opt.load(c.path);
      const step = opt.stepCount;
      await opt.trainStep(optimizerRows(3), { microBatchTokens: 16 });
      const params = policy.native.parameters();
      let finite = true;
      for (const t of Object.values(params)) {
        if (!t.data.every(Number.isFinite)) finite = false;
        t.dispose();
      }
      return { ok: true, step, finite };
    } catch (e) {
      return { threw: true, code: errorCode(e), name: e?.name, message: short(e?.message ?? e, 300) };
    } finally {
      opt.dispose();
      policy.dispose();
    }
  },
};

// --- data worker: an environment made on (hostile) data files, reset and stepped: WebShop on original files, ALFWorld
// on a game folder. Each case is timed; the parent's time limit and memory cap bound it.
const workData = {
  async setup() {
    const { createEnv } = await import('../src/envs/registry.ts');
    return { createEnv };
  },
  async one({ createEnv }, c) {
    const t = performance.now();
    try {
      const env = createEnv(c.env, c.options);
      env.reset(c.seed);
      const first = env.admissibleActions?.()[0] ?? 'look';
      const r = env.step(`<action>${c.env === 'webshop' ? 'search[shoes]' : first}</action>`);
      return { ok: true, ms: Math.round(performance.now() - t), valid: wellFormed(r, false) };
    } catch (e) {
      return { threw: true, code: errorCode(e), name: e?.name, message: short(e?.message ?? e, 300), ms: Math.round(performance.now() - t) };
    }
  },
};

// TypeScript (the project's src/ and test helpers) is loaded through tsx, in workers and in the parent alike.
const { register } = await import('tsx/esm/api');
register();

if (process.argv[2] === '--worker') {
  const [, , , kind, file, from] = process.argv;
  const cases = JSON.parse(readFileSync(file, 'utf8'));
  const run = {
    checkpoint: workCheckpoint,
    tensor: workTensor,
    env: workEnv,
    fixture: workFixture,
    adapter: workAdapter,
    optimizer: workOptimizer,
    data: workData,
  }[kind];
  const ctx = await run.setup();
  for (let i = Number(from); i < cases.length; i++) {
    process.stdout.write(`S ${i}\n`);
    let r;
    try {
      r = await run.one(ctx, cases[i]);
    } catch (e) {
      r = { threw: true, code: errorCode(e), name: e?.name ?? typeof e, message: short(e?.message ?? e, 300) };
    }
    process.stdout.write(`R ${i} ${JSON.stringify(r)}\n`);
  }
  process.stdout.write('DONE\n');
  process.exit(0);
}

// ------------------------------------------------------------------------------------------------------------------
// The parent side: children under a watchdog.

const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback;
};
const CATEGORIES = ['checkpoints', 'cli', 'tensor', 'env', 'paths', 'adapters', 'optimizer', 'runstate', 'data', 'concurrency', 'signals'];
const known = new Set(['--quick', '--only', '--jobs', '--seed', '--verbose', '--keep']);
for (let i = 0; i < args.length; i++) {
  if (!known.has(args[i])) {
    console.error(
      `probe: unknown argument '${args[i]}'\nusage: npm run probe -- [--quick] [--only ${CATEGORIES.join(',')}] [--jobs N] [--seed N] [--verbose] [--keep]`,
    );
    process.exit(2);
  }
  if (['--only', '--jobs', '--seed'].includes(args[i])) i++;
}
const QUICK = flag('--quick');
const VERBOSE = flag('--verbose');
const JOBS = Math.max(1, Number(option('--jobs', '2')) || 2);
const SEED = Number(option('--seed', '1')) || 1;
const only = option('--only', CATEGORIES.join(',')).split(',');
for (const c of only) {
  if (!CATEGORIES.includes(c)) {
    console.error(`probe: unknown category '${c}' (one of ${CATEGORIES.join(', ')})`);
    process.exit(2);
  }
}
const RSS_CAP_MB = 2500;
const scale = (n) => (QUICK ? Math.max(1, Math.ceil(n / 10)) : n);

const work = mkdtempSync(join(tmpdir(), 'lamer-probe-'));
let cleaned = false;
const cleanup = () => {
  if (cleaned) return;
  cleaned = true;
  if (flag('--keep')) console.error(`probe: kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
};
const children = new Set();
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    for (const c of children) c.kill('SIGKILL');
    cleanup();
    process.exit(130);
  });
}

/**
 * The slowest input (a worker's case from its start to its result, or a whole command) and the largest resident memory
 * of any child, over the category running now.
 */
const usage = { maxMs: 0, peakMb: 0 };
const noteInput = (ms, mb = 0) => {
  usage.maxMs = Math.max(usage.maxMs, ms);
  usage.peakMb = Math.max(usage.peakMb, mb);
};

function rssMb(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * Spawns `argv` (node and its arguments) with a watchdog: SIGKILL past `timeoutMs` or past the resident-memory cap.
 * `onLine` sees stdout line by line; it may return a new deadline (ms from now) to restart the clock.
 */
function spawnWatched(argv, { cwd = root, env = process.env, timeoutMs = 30_000, onLine } = {}) {
  return new Promise((resolvePromise) => {
    const t0 = performance.now();
    const child = spawn(argv[0], argv.slice(1), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let out = '';
    let err = '';
    let pending = '';
    let deadline = t0 + timeoutMs;
    let killed;
    let peak = 0;
    child.stdout.on('data', (d) => {
      const s = d.toString();
      if (out.length < 200_000) out += s;
      if (!onLine) return;
      pending += s;
      let nl;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        const extend = onLine(line);
        if (typeof extend === 'number') deadline = performance.now() + extend;
      }
    });
    child.stderr.on('data', (d) => {
      err += d.toString();
      if (err.length > 100_000) err = err.slice(-50_000);
    });
    const timer = setInterval(() => {
      const rss = rssMb(child.pid);
      peak = Math.max(peak, rss);
      if (rss > RSS_CAP_MB) {
        killed = `resident memory ${Math.round(rss)} MB past the ${RSS_CAP_MB} MB cap`;
        child.kill('SIGKILL');
      } else if (performance.now() > deadline) {
        killed = `no answer within ${Math.round(timeoutMs / 1000)} s (hang)`;
        child.kill('SIGKILL');
      }
    }, 50);
    child.on('close', (code, signal) => {
      clearInterval(timer);
      children.delete(child);
      noteInput(onLine ? 0 : performance.now() - t0, peak);
      resolvePromise({ code, signal, killed, out, err, ms: performance.now() - t0, peakMb: Math.round(peak) });
    });
  });
}

/** Runs `fn` over `items` with at most `n` at once. */
async function pool(items, n, fn) {
  const results = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await fn(items[i], i);
      }
    }),
  );
  return results;
}

/**
 * Runs cases in worker children (`shards` of them at once); a child that dies, hangs or grows past the cap is
 * recorded against the case it was on, and a new child goes on with the next case.
 */
async function runWorkers(kind, cases, { caseTimeoutMs, shards = JOBS }) {
  const results = new Array(cases.length);
  const per = Math.ceil(cases.length / shards);
  const groups = Array.from({ length: shards }, (_, s) => cases.map((c, i) => ({ c, i })).slice(s * per, (s + 1) * per)).filter((g) => g.length);
  await Promise.all(
    groups.map(async (group, gi) => {
      const file = join(work, `${kind}-cases-${gi}.json`);
      writeFileSync(file, JSON.stringify(group.map((g) => g.c)));
      let from = 0;
      let deadStarts = 0;
      while (from < group.length) {
        let current = -1;
        let last = -1;
        let began = false;
        let caseStart = performance.now();
        const r = await spawnWatched([process.execPath, '--max-old-space-size=2048', self, '--worker', kind, file, String(from)], {
          timeoutMs: 90_000, // start-up (tsx, the addon); each case gets caseTimeoutMs from its S line
          onLine: (line) => {
            if (line.startsWith('S ')) {
              began = true;
              current = Number(line.slice(2));
              caseStart = performance.now();
              return caseTimeoutMs;
            }
            if (line.startsWith('R ')) {
              noteInput(performance.now() - caseStart);
              const sp = line.indexOf(' ', 2);
              const i = Number(line.slice(2, sp));
              results[group[i].i] = JSON.parse(line.slice(sp + 1));
              last = i;
              current = -1;
              return 90_000;
            }
            return undefined;
          },
        });
        const why = r.killed ?? (r.signal ? `killed by ${r.signal}` : r.code !== 0 ? `exit ${r.code}` : undefined);
        if (!why) break;
        if (!began && ++deadStarts >= 2) {
          // The worker cannot start at all: every remaining case is recorded with why.
          for (let i = from; i < group.length; i++)
            results[group[i].i] = { died: true, why: `worker did not start: ${why}`, stderr: short(r.err.slice(-600), 400) };
          break;
        }
        if (began) deadStarts = 0;
        const blame = current >= 0 ? current : last >= 0 ? last : from;
        results[group[blame].i] = { died: true, why: current >= 0 ? why : `${why} (after the case ended)`, stderr: short(r.err.slice(-600), 400) };
        from = blame + 1;
      }
    }),
  );
  return results;
}

function tally() {
  return { tried: 0, coded: 0, correct: 0, crash: 0, silent: 0, findings: [], notes: [], kinds: new Map() };
}
function count(t, cls, kind, finding) {
  t.tried++;
  t[cls]++;
  const k = t.kinds.get(kind) ?? { coded: 0, correct: 0, crash: 0, silent: 0 };
  k[cls]++;
  t.kinds.set(kind, k);
  if ((cls === 'crash' || cls === 'silent') && finding) t.findings.push({ cls, ...finding });
}

// ------------------------------------------------------------------------------------------------------------------
// Category 1: corrupted checkpoints.

async function makeBase() {
  const base = join(work, 'base');
  const r = await spawnWatched([process.execPath, bin, 'init-model', '--preset', 'tiny', '--out', base, '--seed', '3'], { timeoutMs: 120_000 });
  if (r.code !== 0) throw new Error(`init-model failed: ${r.err}`);
  return base;
}

const FILES = ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'generation_config.json'];

/**
 * The mutations: each a description, what a correct loader does with it (`invalid`: refuse with a code; `harmless`:
 * load; `either`: load or refuse, never crash) and how to apply it to a copy of the base folder.
 */
function checkpointMutations(base, r) {
  const st = readFileSync(join(base, 'model.safetensors'));
  const headerLen = Number(st.readBigUInt64LE(0));
  const headerEnd = 8 + headerLen;
  const header = JSON.parse(st.subarray(8, headerEnd).toString());
  const data = st.subarray(headerEnd);
  const config = JSON.parse(readFileSync(join(base, 'config.json'), 'utf8'));
  const tok = readFileSync(join(base, 'tokenizer.json'), 'utf8');
  const tokCfg = readFileSync(join(base, 'tokenizer_config.json'), 'utf8');
  const gen = readFileSync(join(base, 'generation_config.json'), 'utf8');
  const texts = { 'config.json': JSON.stringify(config, null, 2), 'tokenizer.json': tok, 'tokenizer_config.json': tokCfg, 'generation_config.json': gen };
  const vocab = config.vocab_size;
  const withHeader = (h, lenOverride) => {
    const hb = Buffer.from(typeof h === 'string' ? h : JSON.stringify(h));
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(lenOverride ?? BigInt(hb.length));
    return Buffer.concat([len, hb, data]);
  };
  const put = (file, content) => (dir) => {
    rmSync(join(dir, file), { force: true, recursive: true });
    writeFileSync(join(dir, file), content);
  };
  const editJson = (file, edit) => {
    const j = JSON.parse(texts[file]);
    edit(j);
    return put(file, JSON.stringify(j));
  };
  const firstTensor = Object.keys(header).find((k) => k !== '__metadata__');
  const out = [];
  const add = (kind, desc, expect, apply, n = 1) => out.push({ kind, desc, expect, apply, n });

  // Truncated files (random offsets; each is one case).
  for (let i = 0; i < 40; i++) {
    const at = r.int(st.length);
    add('truncate', `model.safetensors truncated to ${at} of ${st.length} bytes`, 'invalid', put('model.safetensors', st.subarray(0, at)));
  }
  for (let i = 0; i < 20; i++) {
    const file = r.pick(['config.json', 'tokenizer.json', 'tokenizer_config.json', 'generation_config.json']);
    const at = r.int(texts[file].length);
    add('truncate', `${file} truncated to ${at} of ${texts[file].length} bytes`, 'invalid', put(file, texts[file].slice(0, at)));
  }
  // Byte flips in the safetensors header (its length field included) and in the tensor data.
  for (let i = 0; i < 50; i++) {
    const buf = Buffer.from(st);
    const flips = [];
    for (let f = 0, n = 1 + r.int(3); f < n; f++) {
      const at = r.int(headerEnd);
      const v = r.int(256);
      flips.push(`[${at}]=${v}`);
      buf[at] = v;
    }
    const expect = buf.subarray(0, 8).equals(st.subarray(0, 8)) ? 'either' : 'invalid';
    add('header-flip', `model.safetensors header bytes ${flips.join(' ')}`, expect, put('model.safetensors', buf));
  }
  for (let i = 0; i < 40; i++) {
    const buf = Buffer.from(st);
    const flips = [];
    for (let f = 0, n = 1 + r.int(8); f < n; f++) {
      const at = headerEnd + r.int(data.length);
      const v = r.int(256);
      flips.push(`[${at}]=${v}`);
      buf[at] = v;
    }
    add('data-flip', `model.safetensors data bytes ${flips.join(' ')}`, 'either', put('model.safetensors', buf));
  }
  // NaN and infinite weights at random float tensors and elements: a loaded model would score NaN log-probs.
  const floatTensors = Object.keys(header).filter((k) => k !== '__metadata__' && ['F32', 'BF16', 'F16'].includes(header[k].dtype));
  for (let i = 0; i < 12; i++) {
    const name = floatTensors[r.int(floatTensors.length)];
    const {
      dtype,
      data_offsets: [from, to],
    } = header[name];
    const width = dtype === 'F32' ? 4 : 2;
    const element = r.int((to - from) / width);
    const [what, value] = [
      ['NaN', NaN],
      ['+Inf', Infinity],
      ['-Inf', -Infinity],
    ][i % 3];
    const buf = Buffer.from(st);
    const at = headerEnd + from + element * width;
    if (dtype === 'F32') buf.writeFloatLE(value, at);
    else if (dtype === 'BF16') {
      const f = Buffer.alloc(4);
      f.writeFloatLE(value, 0);
      buf.writeUInt16LE(f.readUInt16LE(2), at);
    } else buf.writeUInt16LE(Number.isNaN(value) ? 0x7e00 : value > 0 ? 0x7c00 : 0xfc00, at);
    add('data-nonfinite', `model.safetensors ${name}[${element}] = ${what}`, 'invalid', put('model.safetensors', buf));
  }
  // Structural edits of the safetensors header.
  const h = (edit) => {
    const c = structuredClone(header);
    edit(c);
    return c;
  };
  const tensorEdits = [
    ['dtype F16', (c) => (c[firstTensor].dtype = 'F16')],
    ['dtype I64', (c) => (c[firstTensor].dtype = 'I64')],
    ['dtype XX', (c) => (c[firstTensor].dtype = 'XX')],
    ['dtype 42', (c) => (c[firstTensor].dtype = 42)],
    ['shape [631,65]', (c) => (c[firstTensor].shape = [vocab, 65])],
    ['shape [-631,-64]', (c) => (c[firstTensor].shape = [-vocab, -64])],
    ['shape [2^32,2^32] (product overflows)', (c) => (c[firstTensor].shape = [2 ** 32, 2 ** 32])],
    ['shape [1e12]', (c) => (c[firstTensor].shape = [1e12])],
    ['shape "abc"', (c) => (c[firstTensor].shape = 'abc')],
    ['shape [40384, 4] (same bytes, other shape)', (c) => (c[firstTensor].shape = [(vocab * 64) / 4, 4])],
    ['data_offsets reversed', (c) => (c[firstTensor].data_offsets = [...c[firstTensor].data_offsets].reverse())],
    ['data_offsets past the end', (c) => (c[firstTensor].data_offsets = [data.length - 10, data.length + vocab * 256 - 10])],
    ['data_offsets [0, 2^60]', (c) => (c[firstTensor].data_offsets = [0, 2 ** 60])],
    ['data_offsets negative', (c) => (c[firstTensor].data_offsets = [-256, vocab * 256 - 256])],
    [
      'data_offsets overlapping the next tensor',
      (c) => {
        const [a, b] = c[firstTensor].data_offsets;
        c[firstTensor].data_offsets = [a + 256, b + 256];
      },
    ],
    ['a tensor removed', (c) => delete c[firstTensor]],
    [
      'a tensor renamed',
      (c) => {
        c['model.embed_tokens.weight_x'] = c[firstTensor];
        delete c[firstTensor];
      },
    ],
    ['an extra tensor of shape [1e9, 1e9]', (c) => (c['model.extra.weight'] = { dtype: 'F32', shape: [1e9, 1e9], data_offsets: [0, 4] })],
    ["an extra tensor sharing the first tensor's bytes", (c) => (c['model.extra.weight'] = { dtype: 'F32', shape: [1], data_offsets: [0, 4] })],
    ['__metadata__ with more keys (valid)', (c) => (c.__metadata__ = { format: 'pt', note: 'x'.repeat(1000) })],
    ['__metadata__ a number', (c) => (c.__metadata__ = 5)],
  ];
  for (const [desc, edit] of tensorEdits) {
    const harmless = desc.endsWith('(valid)');
    add('header-edit', `safetensors header: ${desc}`, harmless ? 'harmless' : 'invalid', (dir) => {
      put('model.safetensors', withHeader(h(edit)))(dir);
    });
  }
  const hdrText = st.subarray(8, headerEnd).toString();
  for (const [desc, bytes, expect] of [
    ['header a JSON array', withHeader('[]'), 'invalid'],
    ['header a JSON string', withHeader('"x"'), 'invalid'],
    ['length 0', withHeader('', 0n), 'invalid'],
    ['length 2^63', withHeader(hdrText, 2n ** 63n), 'invalid'],
    ['length 2^64-1', withHeader(hdrText, 2n ** 64n - 1n), 'invalid'],
    ['length = file length + 1', withHeader(hdrText, BigInt(headerLen + data.length + 1)), 'invalid'],
    ['length 100 MB (file is smaller)', withHeader(hdrText, 100_000_000n), 'invalid'],
    ['header of invalid UTF-8', withHeader(Buffer.concat([Buffer.from('{"\xff\xfe'), Buffer.from([0xff, 0xfe, 0xc3])]).toString('latin1')), 'invalid'],
    ['header with duplicate tensor keys', withHeader(hdrText.replace(/^\{/, `{"${firstTensor}":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},`)), 'invalid'],
    ['header padded with trailing spaces (valid)', withHeader(hdrText + ' '.repeat(7)), 'harmless'],
    ['header padded with NUL bytes', withHeader(hdrText + '\u0000'.repeat(7)), 'either'],
    ['header nested 100000 deep', withHeader(`{"__metadata__":${'['.repeat(100000)}${']'.repeat(100000)}}`), 'invalid'],
    ['an empty file', Buffer.alloc(0), 'invalid'],
    ['4 bytes', Buffer.from([1, 2, 3, 4]), 'invalid'],
  ]) {
    add('header-edit', `safetensors: ${desc}`, expect, put('model.safetensors', bytes));
  }

  // Bad JSON in each JSON file.
  for (const file of ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'generation_config.json']) {
    for (const [desc, text, expect] of [
      ['"{"', '{', 'invalid'],
      ['empty', '', 'invalid'],
      ['null', 'null', 'invalid'],
      ['an array', '[]', 'invalid'],
      ['a string', '"x"', 'invalid'],
      ['NaN literal', texts[file].replace(/^\{/, '{"zz": NaN,'), 'invalid'],
      ['a byte-order mark first', '\uFEFF' + texts[file], 'either'],
      ['nested 100000 deep', `{"zz": ${'['.repeat(100000)}${']'.repeat(100000)}}`, 'invalid'],
      ['duplicate keys', texts[file].replace(/^\{/, '{"zz": 1, "zz": 2,'), 'either'],
    ]) {
      if (file !== 'config.json' && desc === 'nested 100000 deep') continue;
      add('bad-json', `${file}: ${desc}`, expect, put(file, text));
    }
  }
  add(
    'bad-json',
    'config.json: 5 MB of whitespace around the object',
    'either',
    put('config.json', ' '.repeat(2_500_000) + texts['config.json'] + ' '.repeat(2_500_000)),
  );

  // config.json values: absurd, negative, huge, wrong types (path, value, expectation).
  const cfg = [
    ['num_hidden_layers', 1e9, 'invalid'],
    ['num_hidden_layers', -1, 'invalid'],
    ['num_hidden_layers', 0, 'invalid'],
    ['num_hidden_layers', 1.5, 'invalid'],
    ['num_hidden_layers', '2', 'invalid'],
    ['num_hidden_layers', 3, 'invalid'],
    ['num_hidden_layers', 1, 'either'],
    ['hidden_size', 0, 'invalid'],
    ['hidden_size', -64, 'invalid'],
    ['hidden_size', 65, 'invalid'],
    ['hidden_size', 2 ** 53, 'invalid'],
    ['intermediate_size', 0, 'invalid'],
    ['intermediate_size', 1e9, 'invalid'],
    ['intermediate_size', 193, 'invalid'],
    ['num_attention_heads', 0, 'invalid'],
    ['num_attention_heads', 3, 'invalid'],
    ['num_attention_heads', 1e9, 'invalid'],
    ['num_key_value_heads', 0, 'invalid'],
    ['num_key_value_heads', 3, 'invalid'],
    ['num_key_value_heads', 8, 'invalid'],
    ['head_dim', 0, 'invalid'],
    ['head_dim', 17, 'invalid'],
    ['head_dim', 1e9, 'invalid'],
    ['vocab_size', 0, 'invalid'],
    ['vocab_size', vocab - 1, 'invalid'],
    ['vocab_size', vocab + 1, 'invalid'],
    ['vocab_size', 1e9, 'invalid'],
    ['vocab_size', -1, 'invalid'],
    ['rms_norm_eps', 1e300, 'invalid'],
    ['rms_norm_eps', -1e-6, 'invalid'],
    ['rms_norm_eps', 0, 'invalid'],
    ['rms_norm_eps', 'x', 'invalid'],
    ['rms_norm_eps', 1e-5, 'harmless'],
    ['rope_parameters.rope_theta', 1e-300, 'invalid'],
    ['rope_parameters.rope_theta', -1, 'invalid'],
    ['rope_parameters.rope_theta', 0, 'invalid'],
    ['rope_parameters.rope_theta', 1e300, 'invalid'],
    ['rope_parameters.rope_theta', 'x', 'invalid'],
    ['rope_parameters.rope_theta', 10000, 'harmless'],
    ['rope_parameters.rope_type', 'yarn', 'invalid'],
    ['rope_parameters.rope_type', 'llama3', 'invalid'],
    ['rope_parameters', null, 'either'],
    ['rope_parameters', 'x', 'invalid'],
    ['rope_theta', 1e-300, 'either'], // the top-level field beside rope_parameters (which transformers 5 reads)
    ['eos_token_id', 1e9, 'invalid'],
    ['eos_token_id', -1, 'invalid'],
    ['eos_token_id', vocab, 'invalid'],
    ['eos_token_id', [543, 99999], 'invalid'],
    ['eos_token_id', 5, 'harmless'],
    ['bos_token_id', 1e9, 'invalid'],
    ['pad_token_id', 1e9, 'invalid'],
    ['max_position_embeddings', 1e9, 'either'],
    ['max_position_embeddings', 2 ** 53, 'either'],
    ['max_position_embeddings', 0, 'invalid'],
    ['max_position_embeddings', -1, 'invalid'],
    ['tie_word_embeddings', false, 'invalid'],
    ['tie_word_embeddings', 'yes', 'invalid'],
    ['model_type', 'gpt2', 'invalid'],
    ['model_type', 'llama', 'either'],
    ['model_type', 'qwen2', 'either'],
    ['model_type', null, 'invalid'],
    ['dtype', 'float64', 'either'],
    ['dtype', 'int8', 'either'],
    ['architectures', ['Foo'], 'either'],
    ['zz_unknown_field', 1, 'harmless'],
    ['__proto__', { vocab_size: 5 }, 'either'],
  ];
  for (const [path, value, expect] of cfg) {
    add('config-value', `config.json: ${path} = ${JSON.stringify(value)}`, expect, (dir) => {
      const c = JSON.parse(texts['config.json']);
      const keys = path.split('.');
      let o = c;
      for (const k of keys.slice(0, -1)) o = o[k];
      if (path === '__proto__') {
        writeFileSync(join(dir, 'config.json'), texts['config.json'].replace(/^\{/, `{"__proto__": ${JSON.stringify(value)},`));
        return;
      }
      o[keys.at(-1)] = value;
      writeFileSync(join(dir, 'config.json'), JSON.stringify(c));
    });
  }

  // Tokenizer files: ids out of the vocabulary, broken models, hostile patterns and templates.
  const tokJ = JSON.parse(tok);
  const someToken = Object.keys(tokJ.model.vocab).find((t) => t === 'h') ?? Object.keys(tokJ.model.vocab)[60];
  for (const [desc, edit, expect] of [
    [`model.vocab["${someToken}"] = ${vocab + 100} (out of the model's vocabulary)`, (j) => (j.model.vocab[someToken] = vocab + 100), 'invalid'],
    [`model.vocab["${someToken}"] = -5`, (j) => (j.model.vocab[someToken] = -5), 'invalid'],
    [`model.vocab["${someToken}"] = 1.5`, (j) => (j.model.vocab[someToken] = 1.5), 'invalid'],
    ['added token <|im_start|> id 99999', (j) => (j.added_tokens.find((t) => t.content === '<|im_start|>').id = 99999), 'invalid'],
    ['added token <|im_start|> id -1', (j) => (j.added_tokens.find((t) => t.content === '<|im_start|>').id = -1), 'invalid'],
    ['model.vocab empty', (j) => (j.model.vocab = {}), 'either'],
    ['model null', (j) => (j.model = null), 'invalid'],
    ['model.type "Unknown"', (j) => (j.model.type = 'Unknown'), 'invalid'],
    ['merges [[1, 2]]', (j) => (j.model.merges = [[1, 2]]), 'either'],
    ['merges of unknown tokens', (j) => (j.model.merges = [['zzz', 'yyy'], ...j.model.merges]), 'either'],
    [
      'pre_tokenizer Split on a catastrophic pattern (a+)+$',
      (j) => (j.pre_tokenizer = { type: 'Split', pattern: { Regex: '(a+)+$' }, behavior: 'Isolated', invert: false }),
      'invalid',
    ],
    [
      'pre_tokenizer Split on an invalid regex',
      (j) => (j.pre_tokenizer = { type: 'Split', pattern: { Regex: '([' }, behavior: 'Isolated', invert: false }),
      'invalid',
    ],
    ['normalizer of unknown type', (j) => (j.normalizer = { type: 'Bogus' }), 'invalid'],
    ['added_tokens not an array', (j) => (j.added_tokens = 5), 'invalid'],
    [
      '100,000 added tokens (ids reusing those of the vocabulary)',
      (j) =>
        (j.added_tokens = Array.from({ length: 100_000 }, (_, i) => ({
          id: i % vocab,
          content: `<t${i}>`,
          special: true,
          single_word: false,
          lstrip: false,
          rstrip: false,
          normalized: false,
        }))),
      'either',
    ],
  ]) {
    add('tokenizer', `tokenizer.json: ${desc}`, expect, editJson('tokenizer.json', edit));
  }
  for (const [desc, edit, expect] of [
    ['chat_template "{% for %}" (syntax error)', (j) => (j.chat_template = '{% for %}'), 'invalid'],
    ['chat_template looping 30 million times', (j) => (j.chat_template = '{% for i in range(30000000) %}{% endfor %}{{ messages[0].content }}'), 'invalid'],
    ['chat_template 42', (j) => (j.chat_template = 42), 'invalid'],
    ['chat_template a list of unnamed templates', (j) => (j.chat_template = [{ template: 'x' }]), 'either'],
    ['chat_template that recurses through a macro', (j) => (j.chat_template = '{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}'), 'invalid'],
    ['eos_token 42', (j) => (j.eos_token = 42), 'either'],
    ['eos_token a token the vocabulary lacks', (j) => (j.eos_token = '<|no-such-token|>'), 'either'],
    ['added_tokens_decoder id "abc"', (j) => (j.added_tokens_decoder = { abc: { content: '<x>', special: true } }), 'either'],
    [`added_tokens_decoder id ${vocab + 1000}`, (j) => (j.added_tokens_decoder = { [vocab + 1000]: { content: '<x>', special: true } }), 'either'],
    ['model_max_length -1', (j) => (j.model_max_length = -1), 'either'],
  ]) {
    add('tokenizer', `tokenizer_config.json: ${desc}`, expect, editJson('tokenizer_config.json', edit));
  }
  for (const [desc, edit, expect] of [
    ['eos_token_id 99999', (j) => (j.eos_token_id = 99999), 'invalid'],
    ['eos_token_id [-1]', (j) => (j.eos_token_id = [-1]), 'invalid'],
    ['eos_token_id []', (j) => (j.eos_token_id = []), 'either'],
    ['eos_token_id "x"', (j) => (j.eos_token_id = 'x'), 'invalid'],
    ['pad_token_id 1e300 (a field the loader does not read)', (j) => (j.pad_token_id = 1e300), 'either'],
  ]) {
    add('tokenizer', `generation_config.json: ${desc}`, expect, editJson('generation_config.json', edit));
  }

  // Missing files, a FIFO, a directory, symlinks in place of a file.
  for (const [file, expect] of [
    ['config.json', 'invalid'],
    ['model.safetensors', 'invalid'],
    ['tokenizer.json', 'either'],
    ['tokenizer_config.json', 'either'],
    ['generation_config.json', 'harmless'],
  ]) {
    add('file-kind', `${file} missing`, expect, (dir) => rmSync(join(dir, file)));
  }
  for (const file of [...FILES, 'model.safetensors.index.json', 'chat_template.jinja']) {
    add('file-kind', `${file} is a FIFO (named pipe)`, 'invalid', (dir) => {
      rmSync(join(dir, file), { force: true });
      execFileSync('mkfifo', [join(dir, file)]);
    });
    add('file-kind', `${file} is a directory`, 'invalid', (dir) => {
      rmSync(join(dir, file), { force: true });
      mkdirSync(join(dir, file));
      writeFileSync(join(dir, file, 'x'), 'x');
    });
  }
  const outside = join(work, 'outside');
  mkdirSync(outside, { recursive: true });
  writeFileSync(join(outside, 'passwd'), 'root:x:0:0:root:/root:/bin/bash\n');
  for (const f of FILES) copyFileSync(join(base, f), join(outside, f));
  for (const [desc, file, target, expect] of [
    ['model.safetensors -> a text file outside the folder', 'model.safetensors', join(outside, 'passwd'), 'invalid'],
    ['config.json -> a text file outside the folder', 'config.json', join(outside, 'passwd'), 'invalid'],
    [
      'model.safetensors -> a valid copy outside the folder (as in the Hugging Face cache)',
      'model.safetensors',
      join(outside, 'model.safetensors'),
      'harmless',
    ],
    ['config.json -> a valid copy outside the folder', 'config.json', join(outside, 'config.json'), 'harmless'],
    ['model.safetensors -> /dev/zero', 'model.safetensors', '/dev/zero', 'invalid'],
    ['config.json -> /dev/zero', 'config.json', '/dev/zero', 'invalid'],
    ['tokenizer.json -> /dev/urandom', 'tokenizer.json', '/dev/urandom', 'invalid'],
    ['config.json -> itself (a symlink loop)', 'config.json', 'config.json', 'invalid'],
    ['model.safetensors -> a missing file (dangling)', 'model.safetensors', join(outside, 'no-such-file'), 'invalid'],
    ['tokenizer_config.json -> /proc/self/status', 'tokenizer_config.json', '/proc/self/status', 'invalid'],
  ]) {
    add('file-kind', `symlink: ${desc}`, expect, (dir) => {
      rmSync(join(dir, file), { force: true });
      symlinkSync(target, join(dir, file));
    });
  }
  // Shard indexes (the existing fuzz test's variants and more).
  for (const [desc, text, expect] of [
    ['"{"', '{', 'invalid'],
    ['empty weight_map', '{"weight_map": {}}', 'either'],
    ['a shard outside the folder', JSON.stringify({ weight_map: { [firstTensor]: '../outside/model.safetensors' } }), 'invalid'],
    ['an absolute shard path', JSON.stringify({ weight_map: { [firstTensor]: join(outside, 'model.safetensors') } }), 'invalid'],
    ['a missing shard', JSON.stringify({ weight_map: { [firstTensor]: 'missing.safetensors' } }), 'invalid'],
    ['one tensor mapped to model.safetensors', JSON.stringify({ weight_map: { [firstTensor]: 'model.safetensors' } }), 'either'],
    ['weight_map an array', JSON.stringify({ weight_map: [] }), 'invalid'],
    ['a shard that is a FIFO', JSON.stringify({ weight_map: { [firstTensor]: 'fifo.safetensors' } }), 'invalid'],
  ]) {
    add('shard-index', `model.safetensors.index.json: ${desc}`, expect, (dir) => {
      writeFileSync(join(dir, 'model.safetensors.index.json'), text);
      if (text.includes('fifo.safetensors')) execFileSync('mkfifo', [join(dir, 'fifo.safetensors')]);
    });
  }
  add('harmless', 'the base checkpoint unchanged', 'harmless', () => {});
  add('harmless', 'an unrelated extra file (README.md)', 'harmless', (dir) => writeFileSync(join(dir, 'README.md'), '# model'));
  return out;
}

/** Per kind, about a tenth of the cases (at least one) under --quick. */
function sample(cases, r) {
  if (!QUICK) return cases;
  const byKind = new Map();
  for (const c of cases) byKind.set(c.kind, [...(byKind.get(c.kind) ?? []), c]);
  const out = [];
  for (const list of byKind.values()) {
    const n = Math.max(1, Math.round(list.length / 10));
    const picked = new Set();
    while (picked.size < n) picked.add(r.int(list.length));
    for (const i of [...picked].sort((a, b) => a - b)) out.push(list[i]);
  }
  return out;
}

async function probeCheckpoints(base) {
  const t = tally();
  const r = rng(SEED * 31 + 1);
  const cases = sample(checkpointMutations(base, r), r);
  const dirs = join(work, 'checkpoints');
  mkdirSync(dirs);
  const specs = cases.map((c, i) => {
    const dir = join(dirs, `case-${i}`);
    mkdirSync(dir);
    for (const f of FILES) copyFileSync(join(base, f), join(dir, f));
    c.apply(dir);
    return { dir };
  });
  const results = await runWorkers('checkpoint', specs, { caseTimeoutMs: 15_000 });
  results.forEach((res, i) => {
    const c = cases[i];
    const expected = { invalid: 'a coded error', harmless: 'a load with finite log-probs', either: 'a load with finite log-probs or a coded error' };
    const repro = { what: c.desc, expect: expected[c.expect] };
    if (!res || res.died) count(t, 'crash', c.kind, { ...repro, got: res ? res.why : 'no result', detail: res?.stderr });
    else if (res.threw) {
      if (res.code) {
        count(t, 'coded', c.kind);
        if (c.expect === 'harmless') t.notes.push(`refused although harmless: ${c.desc}: [${res.code}] ${short(res.message, 120)}`);
      } else count(t, 'crash', c.kind, { ...repro, got: `uncoded ${res.name}: ${res.message}` });
    } else if (c.expect === 'invalid') count(t, 'silent', c.kind, { ...repro, got: `loaded${res.finite ? '' : ' (non-finite log-probs)'}` });
    else if (!res.finite) count(t, 'silent', c.kind, { ...repro, got: 'loaded, log-probs not finite' });
    else count(t, 'correct', c.kind);
  });
  return t;
}

// ------------------------------------------------------------------------------------------------------------------
// Category 2: bad configs and command lines.

/** A cheap config: the random chance row on 4x4 MineSweeper, so an accepted call ends in a second or two. */
function cheapConfig(dir, runsDir) {
  const path = join(dir, 'probe.yaml');
  writeFileSync(
    path,
    [
      'name: probe',
      `runsDir: ${JSON.stringify(runsDir)}`,
      'method: random',
      'env:',
      '  name: minesweeper',
      '  options: {rows: 4, cols: 4, mines: 2, maxTurns: 3}',
      'trial: {episodes: 2}',
      'eval: {tasks: 2}',
      '',
    ].join('\n'),
  );
  return path;
}

/** Classifies a finished CLI call: coded (E_ code or usage error), correct, crash or silent. */
function classifyCli(r, expect, cmd) {
  const text = `${r.err}\n${r.out}`;
  if (r.killed) {
    const started = /\[job\]|iter \d|pass@k on/.test(text);
    return started ? ['silent', `accepted and started a run; ${r.killed}`] : ['crash', r.killed];
  }
  if (r.signal) return ['crash', `killed by ${r.signal}`];
  if (r.code === 0) return expect === 'error' ? ['silent', 'exit 0'] : ['correct', 'exit 0'];
  const stack = /^\s+at /m.test(r.err);
  const m = /lamer(?: [a-z-]+)?: \[(E_[A-Z_]+)\]/.exec(r.err) ?? (stack ? null : CODE_RE.exec(r.err));
  if (m) return ['coded', m[1]];
  if (!stack && r.code === 2 && new RegExp(`^lamer( ${cmd})?:`, 'm').test(r.err)) return ['coded', 'usage error (exit 2)'];
  // The command's own refusal (`lamer CMD: ...`, exit 1) rather than an exception that reached main (`lamer: ...`).
  if (!stack && new RegExp(`^lamer ${cmd}: `, 'm').test(r.err)) return ['coded', `refused without an E_ code (exit ${r.code})`];
  return ['crash', `exit ${r.code} without a code: ${short(r.err.split('\n').filter(Boolean).slice(0, 3).join(' | '), 200)}`];
}

async function probeCli(base) {
  const t = tally();
  const dir = join(work, 'cli');
  mkdirSync(dir);
  const runsDir = join(dir, 'runs');
  const cfg = cheapConfig(dir, runsDir);
  const file = (name, text) => {
    const p = join(dir, name);
    writeFileSync(p, text);
    return p;
  };
  const yaml = (name, extra) => file(name, readFileSync(cfg, 'utf8') + extra);
  const fifo = join(dir, 'fifo.yaml');
  execFileSync('mkfifo', [fifo]);
  const laughs = ['a: &a [x, x, x, x, x, x, x, x, x]'];
  for (let i = 1; i < 9; i++)
    laughs.push(
      `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9)
        .fill(`*${String.fromCharCode(96 + i)}`)
        .join(', ')}]`,
    );
  const ids = file('ids.jsonl', '{"ids": [1, 2, 3]}\n');
  const badIds = file('bad-ids.jsonl', `{"ids": [1, ${99999}, 3]}\n{"ids": [-1, 2]}\n`);
  const notJson = file('not-json.jsonl', '{"ids": [1, 2\n');
  const train = (...a) => ['train', '--config', cfg, '--quiet', ...a];
  const trainWith = (config) => ['train', '--config', config, '--quiet'];
  const set = (s) => train('--set', s);
  const cases = [
    // --set with wrong types, out-of-range values, unknown and forbidden fields
    ['set', set('optim.lr=abc')],
    ['set', set('optim.lr=-1')],
    ['set', set('optim.lr=.nan')],
    ['set', set('optim.lr=.inf')],
    ['set', set('rollout.groupSize=0')],
    ['set', set('rollout.groupSize=1.5')],
    ['set', set('rollout.groupSize=1e300')],
    ['set', set('trial.episodes=-3')],
    ['set', set('trial.episodes=[1, 2]')],
    ['set', set('foo=1')],
    ['set', set('optim.bogus=1')],
    ['set', set('__proto__.x=1')],
    ['set', set('optim.__proto__=1')],
    ['set', set('optim={"__proto__": {"x": 1}}')],
    ['set', set('constructor.prototype.x=1')],
    ['set', set('=1')],
    ['set', set('optim.lr')],
    ['set', set('..lr=1')],
    ['set', set('method=bogus')],
    ['set', set('env.name=chess')],
    ['set', set('model.device=tpu')],
    ['set', set('model.dtype=int8')],
    ['set', set('seed=-1')],
    ['set', set('seed=1e300')],
    ['set', set('eval.tasks=0')],
    ['set', set('train.iterations=-1')],
    ['set', set('compare=[lamer, bogus]')],
    ['set', set('name=')],
    ['set', set('env.options.rows=-4')],
    ['set', set('env.options.rows=1e9')],
    ['set', set('env.options.mines=100')],
    ['set', set('env.options.maxTurns=0')],
    ['set', set('env.options={"__proto__": 1}')],
    ['set', set('env.options.bogusOption=1')],
    // config files: bad YAML, duplicates, forbidden keys, tags, alias bombs, cycles, special files
    ['config-file', trainWith(file('tabs.yaml', 'name: x\n\tmethod: random\n'))],
    ['config-file', trainWith(file('unclosed.yaml', 'env: {name: minesweeper, options: [1, 2}\n'))],
    ['config-file', trainWith(yaml('dup.yaml', 'method: lamer\n'))],
    ['config-file', trainWith(yaml('proto.yaml', '__proto__: {method: lamer}\n'))],
    ['config-file', trainWith(yaml('tag.yaml', 'seed: !!js/function "function () {}"\n'))],
    ['config-file', trainWith(yaml('unknown-tag.yaml', 'seed: !foo 3\n'))],
    ['config-file', trainWith(file('laughs.yaml', `${laughs.join('\n')}\nname: probe\n`))],
    ['config-file', trainWith(file('list.yaml', '- 1\n- 2\n'))],
    ['config-file', trainWith(file('cycle.yaml', `extends: ${join(dir, 'cycle.yaml')}\nname: x\n`))],
    ['config-file', trainWith(file('extends42.yaml', 'extends: 42\n'))],
    ['config-file', trainWith(file('extends-zero.yaml', 'extends: /dev/zero\n'))],
    ['config-file', trainWith(file('empty.yaml', ''))],
    ['config-file', trainWith(join(dir, 'no-such.yaml'))],
    ['config-file', trainWith('no-such-config')],
    ['config-file', trainWith('')],
    ['config-file', trainWith('/dev/zero')],
    ['config-file', trainWith(fifo)],
    ['config-file', trainWith(dir)],
    // train flags
    ['flags', train('--seeds', 'abc')],
    ['flags', train('--seeds', '5-1')],
    ['flags', train('--seeds', '0-100000')],
    ['flags', train('--nproc', '0')],
    ['flags', train('--nproc', '1e9')],
    ['flags', train('--resume', '--force')],
    ['flags', train('--bogus')],
    ['flags', train('--method', 'bogus')],
    // other commands
    ['doctor', ['doctor', '--bogus']],
    ['doctor', ['doctor', '--json=1']],
    ['doctor', ['doctor', 'extra']],
    ['generate', ['generate', '--model', base, '--prompt', 'y', '--top-k=-5']],
    ['generate', ['generate', '--model', base, '--prompt', 'y', '--top-p', '0']],
    ['generate', ['generate', '--model', base, '--prompt', 'y', '--top-p', '2']],
    ['generate', ['generate', '--model', base, '--prompt', 'y', '--temperature', '-1']],
    ['generate', ['generate', '--model', base, '--prompt', 'y', '--temperature', 'NaN']],
    ['generate', ['generate', '--model', base, '--prompt', 'y', '--max-new', '1e300']],
    ['generate', ['generate', '--model', base, '--prompt', 'y', '--max-new', '-1']],
    ['generate', ['generate', '--model', base, '--prompt', 'y', '--seed', 'abc']],
    ['generate', ['generate', '--model', base, '--prompt', 'y', '--device', 'tpu']],
    ['generate', ['generate', '--prompt', 'y']],
    ['generate', ['generate', '--model', join(dir, 'no-such-model'), '--prompt', 'y']],
    ['init-model', ['init-model', '--preset', 'tiny', '--out', join(dir, 'never'), '--seed', '1e300']],
    ['init-model', ['init-model', '--preset', 'tiny', '--out', join(dir, 'never'), '--seed', '-1']],
    ['init-model', ['init-model', '--preset', 'huge', '--out', join(dir, 'never')]],
    ['init-model', ['init-model', '--preset', 'tiny', '--out', join(dir, 'never'), '--tokenizer', 'bogus']],
    ['init-model', ['init-model', '--preset', 'tiny']],
    ['init-model', ['init-model', '--preset', 'tiny', '--out', ids]],
    ['eval', ['eval', '--config', cfg, '--tasks', '0']],
    ['eval', ['eval', '--config', cfg, '--tasks', 'abc']],
    ['eval', ['eval', '--config', cfg, '--tasks', '1e300']],
    ['eval', ['eval', '--config', cfg, '--split', 'bogus']],
    ['eval', ['eval', '--config', cfg, '--method', 'bogus']],
    ['eval', ['eval', '--config', cfg, '--method', 'lamer']],
    ['score', ['score', '--model', base]],
    ['score', ['score', '--model', base, '--input', join(dir, 'no-such.jsonl'), '--out', join(dir, 'o.jsonl')]],
    ['score', ['score', '--model', base, '--input', ids, '--out', join(dir, 'o.jsonl'), '--batch', '0']],
    ['score', ['score', '--model', base, '--input', ids, '--out', join(dir, 'o.jsonl'), '--batch', '-1']],
    ['score', ['score', '--model', base, '--input', badIds, '--out', join(dir, 'o2.jsonl')]],
    ['score', ['score', '--model', base, '--input', notJson, '--out', join(dir, 'o3.jsonl')]],
    ['compare', ['compare']],
    ['compare', ['compare', join(dir, 'no-such-run')]],
    ['compare', ['compare', dir, '--resamples', '-1']],
    ['report', ['report']],
    ['report', ['report', join(dir, 'no-such-run')]],
    ['report', ['report', dir, '--bogus']],
    ['config', ['config', 'show', '--config', cfg, '--set', 'foo=1']],
    ['config', ['config', 'bogus']],
    ['config', ['config', 'show', '--config', join(dir, 'no-such.yaml')]],
    ['sft', ['sft', '--config', cfg, '--set', 'sft.steps=-1']],
    ['unknown-flag', ['eval', '--bogus']],
    ['unknown-flag', ['generate', '--bogus']],
    ['unknown-flag', ['init-model', '--bogus']],
    ['unknown-flag', ['score', '--bogus']],
    ['unknown-flag', ['compare', '--bogus']],
    ['unknown-flag', ['config', 'show', '--bogus']],
    ['unknown-flag', ['sft', '--bogus']],
    ['top-level', ['bogus']],
    ['top-level', ['help', 'bogus']],
  ];
  const r = rng(SEED * 31 + 2);
  const chosen = sample(
    cases.map(([kind, argv]) => ({ kind, argv })),
    r,
  );
  const results = await pool(chosen, JOBS, (c) =>
    spawnWatched([process.execPath, '--max-old-space-size=2048', bin, ...c.argv], { cwd: dir, timeoutMs: 15_000 }),
  );
  results.forEach((res, i) => {
    const c = chosen[i];
    const [cls, why] = classifyCli(res, 'error', c.argv[0]);
    if (why.startsWith('refused without'))
      t.notes.push(`${why}: lamer ${c.argv.map((a) => quoteArg(a.split(work).join('TMP'))).join(' ')}: ${short(res.err.split(work).join('TMP'), 140)}`);
    count(t, cls, c.kind, {
      what: `(cwd TMP/cli) lamer ${c.argv.map((a) => quoteArg(a.split(work).join('TMP'))).join(' ')}`,
      expect: 'a coded error',
      got: why,
      detail: cls === 'crash' ? short(res.err.slice(-500), 300) : undefined,
    });
  });
  return t;
}

function quoteArg(a) {
  return /^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`).replace(/\n/g, '\\n')}'`;
}

// ------------------------------------------------------------------------------------------------------------------
// Category 3: abuses of the Tensor API (expect: error, ok or either).

function tensorCases() {
  const E = 'error';
  const c = [
    ['shape', 'return Tensor.zeros([-1])', E],
    ['shape', 'return Tensor.zeros([NaN])', E],
    ['shape', 'return Tensor.zeros([Infinity])', E],
    ['shape', 'return Tensor.zeros([1.5])', E],
    ['shape', 'return Tensor.zeros([2 ** 53])', E],
    ['shape', 'return Tensor.zeros([1e12])', E],
    ['shape', 'return Tensor.zeros([1e6, 1e6])', E],
    ['shape', 'return Tensor.zeros([2 ** 32, 2 ** 32])', E],
    ['shape', 'return Tensor.zeros([2 ** 62, 4])', E],
    ['shape', 'return Tensor.zeros([-2, -3])', E],
    ['shape', 'return Tensor.zeros("abc")', E],
    ['shape', 'return Tensor.zeros(null)', E],
    ['shape', 'return Tensor.zeros(undefined)', E],
    ['shape', 'return Tensor.zeros([1n])', E],
    ['shape', 'return Tensor.zeros(["2"])', E],
    ['shape', 'return Tensor.zeros({ length: 2, 0: 1, 1: 2 })', 'either'],
    ['shape', 'return Tensor.zeros([])', 'ok'],
    ['shape', 'return Tensor.zeros([0])', 'ok'],
    ['shape', 'return Tensor.zeros(Array(64).fill(1))', 'either'],
    ['shape', 'return Tensor.zeros(Array(10000).fill(1))', 'either'],
    ['shape', 'return Tensor.randn([2 ** 31, 2 ** 31])', E],
    ['value', 'return Tensor.full([2], NaN)', 'ok'],
    ['value', 'return Tensor.full([2], "x")', E],
    ['value', 'return Tensor.full([2], 1e300)', 'either'],
    ['value', 'return Tensor.full([2], 1e300, { dtype: "int32" })', 'either'],
    ['value', 'return Tensor.full([2], 5n)', E],
    ['value', 'return Tensor.full([2], undefined)', E],
    ['dtype', 'return Tensor.zeros([2], { dtype: "float128" })', E],
    ['dtype', 'return Tensor.zeros([2], { dtype: "__proto__" })', E],
    ['dtype', 'return Tensor.zeros([2], { dtype: 7 })', E],
    ['dtype', 'return Tensor.zeros([2], { dtype: "constructor" })', E],
    ['device', 'return Tensor.zeros([2], { device: "cuda:99" })', E],
    ['device', 'return Tensor.zeros([2], { device: "tpu" })', E],
    ['device', 'return Tensor.zeros([2], { device: "cuda:-1" })', E],
    ['device', 'return Tensor.zeros([2], { device: "cpu:99" })', E],
    ['device', 'return Tensor.zeros([2], { device: "" })', E],
    ['seed', 'return Tensor.randn([2], { seed: NaN })', E],
    ['seed', 'return Tensor.randn([2], { seed: -1 })', 'either'],
    ['seed', 'return Tensor.randn([2], { seed: 1e300 })', E],
    ['seed', 'return Tensor.randn([2], { seed: "x" })', E],
    ['from', 'return Tensor.from(new Float32Array(6), { shape: [2, 2] })', E],
    ['from', 'return Tensor.from(new Float32Array(6), { shape: [7] })', E],
    ['from', 'return Tensor.from(new Float32Array(6), { shape: [-6] })', E],
    ['from', 'return Tensor.from(new Float32Array(6), { shape: [-2, -3] })', E],
    ['from', 'return Tensor.from(new Float32Array(6), { shape: [2 ** 32 + 6] })', E],
    ['from', 'return Tensor.from(new Float32Array(6), { shape: [NaN] })', E],
    ['from', 'return Tensor.from(new Uint16Array(2))', E],
    ['from', 'return Tensor.from([1, 2, 3])', E],
    ['from', 'return Tensor.from(null)', E],
    ['from', 'return Tensor.from(new DataView(new ArrayBuffer(8)))', E],
    ['from', 'return Tensor.from(new Float32Array(4), { dtype: "int32" })', 'either'],
    ['from', 'return Tensor.from(new Float32Array(4), { dtype: "float64" })', E],
    ['from', 'return Tensor.from(new Float32Array(4), { dtype: "int64" })', E],
    ['from', 'return Tensor.from(new Uint8Array(3), { dtype: "float32" })', E],
    ['from', 'const b = new ArrayBuffer(16); const a = new Float32Array(b); structuredClone(b, { transfer: [b] }); return Tensor.from(a)', 'either'],
    ['from', 'return Tensor.from(new Float32Array(new SharedArrayBuffer(16)))', 'either'],
    ['from', 'return Tensor.from(new Float32Array(new ArrayBuffer(20), 4, 3))', 'ok'],
    ['from', 'return Tensor.from(new BigInt64Array([2n ** 63n - 1n])).toArray()', 'ok'],
    ['disposed', 'const t = Tensor.zeros([2]); t.dispose(); return t.sum()', E],
    ['disposed', 'const t = Tensor.zeros([2]); t.dispose(); return t.clone()', E],
    ['disposed', 'const t = Tensor.zeros([2]); t.dispose(); return t.fill_(1)', E],
    ['disposed', 'const t = Tensor.zeros([2]); t.dispose(); return t.mul_(2)', E],
    ['disposed', 'const t = Tensor.zeros([2, 2]); const o = Tensor.zeros([2, 2]); t.dispose(); return await t.matmul(o)', E],
    ['disposed', 'const t = Tensor.zeros([2, 2]); const o = Tensor.zeros([2, 2]); o.dispose(); return await t.matmul(o)', E],
    ['disposed', 'const t = Tensor.zeros([2]); t.dispose(); return await t.to("cpu")', E],
    ['disposed', 'const t = Tensor.zeros([2]); t.dispose(); return t.data.length', 'either'],
    ['disposed', 'const t = Tensor.zeros([2]); t.dispose(); t.dispose(); return t.disposed', 'ok'],
    ['disposed', 'const t = Tensor.zeros([2]); const d = t.data; t.dispose(); d[0] = 5; return d.length', 'ok'],
    ['disposed', 'const t = Tensor.zeros([2]); t.dispose(); return t.shape', 'either'],
    ['disposed', 'const t = Tensor.zeros([64, 64]); const p = t.matmul(t); t.dispose(); return await p', 'either'],
    ['matmul', 'return await Tensor.zeros([2, 3]).matmul(Tensor.zeros([2, 3]))', E],
    ['matmul', 'return await Tensor.zeros([2, 3]).matmul(Tensor.zeros([3, 2], { dtype: "float64" }))', 'either'],
    ['matmul', 'return await Tensor.zeros([2, 2], { dtype: "bool" }).matmul(Tensor.zeros([2, 2], { dtype: "bool" }))', 'either'],
    ['matmul', 'return await Tensor.zeros([]).matmul(Tensor.zeros([]))', E],
    ['matmul', 'return await Tensor.zeros([2, 2]).matmul(null)', E],
    ['matmul', 'return await Tensor.zeros([2, 2]).matmul({})', E],
    ['matmul', 'return await Tensor.zeros([2, 2]).matmul(Tensor.zeros([2, 2]).native)', E],
    ['matmul', 'return await Tensor.zeros([0, 3]).matmul(Tensor.zeros([3, 0]))', 'ok'],
    ['inplace', 'return Tensor.zeros([2]).fill_("x")', E],
    ['inplace', 'return Tensor.zeros([2]).fill_(undefined)', E],
    ['inplace', 'return Tensor.zeros([2]).fill_(NaN).toArray()', 'ok'],
    ['inplace', 'return Tensor.zeros([2], { dtype: "int32" }).fill_(1e300).toArray()', 'either'],
    ['inplace', 'return Tensor.zeros([2], { dtype: "bool" }).mul_(Infinity).toArray()', 'either'],
    ['inplace', 'return Tensor.zeros([2]).mul_({})', E],
    ['to', 'return await Tensor.zeros([2]).to("cuda:7")', E],
    ['to', 'return await Tensor.zeros([2]).to("cpu", "float128")', E],
    ['to', 'return await Tensor.zeros([2]).to("mars")', E],
    ['to', 'return await Tensor.zeros([2]).to("cpu", "bool")', 'ok'],
    ['to', 'return await Tensor.zeros([2]).to(undefined)', E],
    ['data', 'return Tensor.zeros([3], { dtype: "float16" }).data', 'ok'],
    ['data', 'return Tensor.from(new BigInt64Array([2n ** 62n, 2n ** 62n])).sum()', 'ok'],
    ['data', 'const t = Tensor.zeros([3]); t.data.fill(7); return t.sum()', 'ok'],
    ['internal', 'return new Tensor({}).sum()', E],
    ['internal', 'return api.liveTensorCount()', 'ok'],
  ];
  return c.map(([kind, body, expect]) => ({ kind, body, expect }));
}

async function probeTensor() {
  const t = tally();
  const r = rng(SEED * 31 + 3);
  const cases = sample(tensorCases(), r);
  const results = await runWorkers(
    'tensor',
    cases.map((c) => ({ body: c.body })),
    { caseTimeoutMs: 20_000, shards: 1 },
  );
  results.forEach((res, i) => {
    const c = cases[i];
    const repro = { what: c.body, expect: c.expect === 'error' ? 'a coded error' : c.expect === 'ok' ? 'success' : 'success or a coded error' };
    if (!res || res.died) count(t, 'crash', c.kind, { ...repro, got: res ? res.why : 'no result', detail: res?.stderr });
    else if (res.threw) {
      if (res.code) {
        count(t, 'coded', c.kind);
        if (c.expect === 'ok') t.notes.push(`refused although valid: ${c.body}: [${res.code}] ${short(res.message, 120)}`);
      } else count(t, 'crash', c.kind, { ...repro, got: `uncoded ${res.name}: ${res.message}` });
    } else if (c.expect === 'error') count(t, 'silent', c.kind, { ...repro, got: `returned ${res.value}` });
    else count(t, 'correct', c.kind);
  });
  return t;
}

// ------------------------------------------------------------------------------------------------------------------
// Category 4: adversarial agent responses.

/**
 * The first task seed of the environment cases of a probe seed. Every environment takes training seeds below
 * SELECT_SEEDS.start (900,000,000; src/envs/common/seeds.ts), and a case walks at most `stepsPerEpisode` episodes
 * 1,000,003 seeds apart from its own, so bases stay below 700,000,000: probe seeds wrap around after 7,000 (seed 7,001
 * repeats seed 1's tasks, with its own responses).
 */
function envSeedBase(seed) {
  return ((seed % 7_000) * 100_000) % 700_000_000;
}

async function probeEnv() {
  const t = tally();
  const envs = ['minesweeper', 'sokoban', 'webshop', 'alfworld'];
  const total = scale(10_000);
  const stepsPerEpisode = 100; // calls per case (the worker starts a new episode whenever one ends)
  const cases = [];
  const per = Math.ceil(total / envs.length);
  const base = envSeedBase(SEED);
  for (const env of envs) {
    for (let done = 0, seed = 1; done < per; seed++) {
      const steps = Math.min(stepsPerEpisode, per - done);
      cases.push({ env, seed: base + seed, steps });
      done += steps;
    }
  }
  const results = await runWorkers('env', cases, { caseTimeoutMs: 20_000 });
  results.forEach((res, i) => {
    const c = cases[i];
    if (res?.threw && res.code) {
      // A coded refusal outside a step (reset on the case's seed): a refusal, and noted, since the seeds are meant to
      // be valid for every environment.
      count(t, 'coded', c.env);
      t.notes.push(`${c.env} seed ${c.seed}: refused with [${res.code}] ${short(res.message, 160)}`);
      return;
    }
    if (!res || res.died || res.threw) {
      const why = !res ? 'no result' : res.died ? res.why : `uncoded ${res.name}: ${res.message}`;
      count(t, 'crash', c.env, {
        what: `${c.env} seed ${c.seed}, ${c.steps} adversarial calls (episodes from that seed on)`,
        expect: 'a step result',
        got: why,
        detail: res?.stderr,
      });
      return;
    }
    for (const f of res.findings) {
      if (f.what === 'coded') continue;
      const cls = f.what === 'malformed' ? 'silent' : 'crash';
      t.findings.push({
        cls,
        what: `${f.env}: reset(${f.seed}) then ${f.step} earlier responses, then ${f.call}() of a ${f.kind} response of ${f.length} chars starting ${JSON.stringify(f.head)}`,
        expect: `a step result within ${SLOW_MS} ms`,
        got: f.what === 'slow' ? `${f.ms} ms (best of 3)` : f.what === 'uncoded' ? `uncoded ${f.name}: ${f.message}` : `malformed result ${f.result ?? ''}`,
      });
    }
    const k = t.kinds.get(c.env) ?? { coded: 0, correct: 0, crash: 0, silent: 0 };
    k.correct += res.correct;
    k.coded += res.coded;
    k.crash += res.uncoded + res.slow;
    k.silent += res.malformed;
    t.kinds.set(c.env, k);
    t.tried += res.tried;
    t.correct += res.correct;
    t.coded += res.coded;
    t.crash += res.uncoded + res.slow;
    t.silent += res.malformed;
  });
  return t;
}

// ------------------------------------------------------------------------------------------------------------------
// Category 5: path tricks. Each case runs in its own sandbox: cwd S/cwd, runs in S/cwd/runs (with an earlier run,
// runs/old), canary files beside; any file created, changed or removed outside S/cwd/runs, or in runs/old, is a
// finding whatever the exit code.

function snapshot(dir) {
  const out = new Map();
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const s = lstatSync(p);
      out.set(p, s.isDirectory() ? 'dir' : s.isSymbolicLink() ? `link:${readlinkSync(p)}` : `${s.size}:${s.mtimeMs}`);
      if (s.isDirectory()) walk(p);
    }
  };
  if (existsSync(dir)) walk(dir);
  return out;
}

async function probePaths() {
  const t = tally();
  const boxes = join(work, 'paths');
  mkdirSync(boxes);
  const long = (n) => 'n'.repeat(n);
  // [kind, expect, argv builder (S = sandbox, cfg = its config)]
  const cases = [
    ['train --name', 'error', (S, cfg) => ['train', '--config', cfg, '--quiet', '--name', '../x']],
    ['train --name', 'error', (S, cfg) => ['train', '--config', cfg, '--quiet', '--name', '../../x']],
    ['train --name', 'error', (S, cfg) => ['train', '--config', cfg, '--quiet', '--name', join(S, 'abs')]],
    ['train --name', 'error', (S, cfg) => ['train', '--config', cfg, '--quiet', '--name', '..']],
    ['train --name', 'error', (S, cfg) => ['train', '--config', cfg, '--quiet', '--name', '..', '--force']],
    ['train --name', 'error', (S, cfg) => ['train', '--config', cfg, '--quiet', '--name', '.']],
    ['train --name', 'error', (S, cfg) => ['train', '--config', cfg, '--quiet', '--name', '.', '--force']],
    ['train --name', 'error', (S, cfg) => ['train', '--config', cfg, '--quiet', '--name', '']],
    ['train --name', 'error', (S, cfg) => ['train', '--config', cfg, '--quiet', '--name', 'a/../../x']],
    ['train --name', 'either', (S, cfg) => ['train', '--config', cfg, '--quiet', '--name', 'a/b']],
    ['train --name', 'error', (S, cfg) => ['train', '--config', cfg, '--quiet', '--set', 'name="a\\0b"']],
    ['train --name', 'error', (S, cfg) => ['train', '--config', cfg, '--quiet', '--name', long(300)]],
    [
      'train --name',
      'error',
      (S, cfg) => [
        'train',
        '--config',
        cfg,
        '--quiet',
        '--name',
        `${long(200)}/${long(200)}/${long(200)}/${long(200)}/${long(200)}/${long(200)}/${long(200)}/${long(200)}/${long(200)}/${long(200)}/${long(200)}/${long(200)}/${long(200)}/${long(200)}/${long(200)}/${long(200)}/${long(200)}/${long(200)}/${long(200)}/${long(200)}/x`,
      ],
    ],
    ['train --name', 'either', (S, cfg) => ['train', '--config', cfg, '--quiet', '--name', 'a\nb']],
    ['train --name', 'either', (S, cfg) => ['train', '--config', cfg, '--quiet', '--name', '~']],
    ['train --name', 'error', (S, cfg) => ['train', '--config', cfg, '--quiet', '--name', './../x']],
    ['train --name', 'error', (S, cfg) => ['train', '--config', cfg, '--quiet', '--name', 'x/../../../x']],
    ['eval --model', 'error', (S, cfg) => ['eval', '--config', cfg, '--quiet', '--method', 'lamer', '--model', '../x']],
    ['eval --model', 'error', (S, cfg) => ['eval', '--config', cfg, '--quiet', '--method', 'lamer', '--model', join(S, 'nowhere')]],
    ['eval --model', 'error', (S, cfg) => ['eval', '--config', cfg, '--quiet', '--method', 'lamer', '--set', 'model.path="/tmp\\0x"']],
    ['eval --model', 'error', (S, cfg) => ['eval', '--config', cfg, '--quiet', '--method', 'lamer', '--model', long(5000)]],
    ['eval --model', 'error', (S, cfg) => ['eval', '--config', cfg, '--quiet', '--method', 'lamer', '--model', '/dev/zero']],
    ['eval --model', 'error', (S, cfg) => ['eval', '--config', cfg, '--quiet', '--method', 'lamer', '--model', S]],
    ['eval --model', 'error', (S, cfg) => ['eval', '--config', cfg, '--quiet', '--method', 'lamer', '--model', join(S, 'cwd', 'runs', '..', '..', 'fifo')]],
    ['report', 'error', () => ['report', '../x']],
    ['report', 'either', (S) => ['report', S], ['report.html']], // PATH/report.html is where report writes
    ['report', 'error', () => ['report', '/dev/null']],
    ['report', 'error', (S) => ['report', join(S, 'fifo')]],
    ['report', 'error', () => ['report', long(5000)]],
  ];
  const r = rng(SEED * 31 + 5);
  const chosen = sample(
    cases.map(([kind, expect, argv, allowed = []]) => ({ kind, expect, argv, allowed })),
    r,
  );
  const results = await pool(chosen, JOBS, async (c, i) => {
    const S = join(boxes, `box-${i}`);
    mkdirSync(join(S, 'cwd', 'runs'), { recursive: true });
    writeFileSync(join(S, 'canary'), 'canary');
    writeFileSync(join(S, 'cwd', 'canary'), 'canary');
    // An earlier run that no call here may touch.
    mkdirSync(join(S, 'cwd', 'runs', 'old'));
    writeFileSync(join(S, 'cwd', 'runs', 'old', 'metrics.jsonl'), '{"type":"iteration","iteration":1}\n');
    execFileSync('mkfifo', [join(S, 'fifo')]);
    const cfg = cheapConfig(S, 'runs'); // runsDir relative to the cwd, S/cwd
    const argv = c.argv(S, cfg);
    const before = snapshot(S);
    const res = await spawnWatched([process.execPath, '--max-old-space-size=2048', bin, ...argv], { cwd: join(S, 'cwd'), timeoutMs: 30_000 });
    const after = snapshot(S);
    const inRuns = (p) =>
      (p.startsWith(join(S, 'cwd', 'runs') + '/') && !p.startsWith(join(S, 'cwd', 'runs', 'old'))) || c.allowed.some((a) => p === join(S, a));
    const changed = [];
    for (const [p, v] of after) if (!inRuns(p) && before.get(p) !== v) changed.push(`${before.has(p) ? 'changed' : 'created'} ${p.slice(S.length + 1)}`);
    for (const p of before.keys()) if (!inRuns(p) && !after.has(p)) changed.push(`removed ${p.slice(S.length + 1)}`);
    return { res, changed, argv, S };
  });
  results.forEach(({ res, changed, argv, S }, i) => {
    const c = chosen[i];
    const what = `(cwd SANDBOX/cwd, runsDir runs) lamer ${argv
      .map((a) => quoteArg(a.split(S).join('SANDBOX')))
      .map((a) => (a.length > 80 ? `${a.slice(0, 40)}...(${a.length} chars)` : a))
      .join(' ')}`;
    if (changed.length) {
      const [cls0] = classifyCli(res, c.expect, argv[0]);
      count(t, 'silent', c.kind, {
        what,
        expect: 'nothing written outside runs/ and the earlier run runs/old untouched',
        got: `exit ${res.code ?? res.signal} (${cls0}); ${short(changed.slice(0, 4).join(', '), 240)}${changed.length > 4 ? ` and ${changed.length - 4} more` : ''}`,
      });
      return;
    }
    const [cls, why] = classifyCli(res, c.expect, argv[0]);
    count(t, cls, c.kind, {
      what,
      expect: c.expect === 'error' ? 'a coded error' : 'a coded error or a run inside runs/',
      got: why,
      detail: cls === 'crash' ? short(res.err.slice(-500), 300) : undefined,
    });
  });
  return t;
}

// ------------------------------------------------------------------------------------------------------------------
// Categories 6-11: the surfaces added since the first five (adapters and merge, optimizer and ZeRO shard files, a run's
// trainer state and checkpoints/latest, WebShop's and ALFWorld's data files, two processes on one run folder or its
// parent, signals at each phase). Their fixtures are made once, by the project's own code (the fixture worker, or
// `lamer train`), and each case mutates a copy.

const st = await import('./helpers/safetensors.ts');

/** A folder's files (recursively) with size and content hash: what must not change. */
function contentSnapshot(dir) {
  const out = new Map();
  for (const [p, v] of snapshot(dir)) {
    if (v !== 'dir' && !v.startsWith('link:')) out.set(p, createHash('sha256').update(readFileSync(p)).digest('hex'));
    else out.set(p, v);
  }
  return out;
}

function copyDir(from, to) {
  cpSync(from, to, { recursive: true, verbatimSymlinks: true });
  return to;
}

/** Replaces `path` by a named pipe, a link to /dev/zero, a folder, or removes it. */
function replaceWith(path, what) {
  rmSync(path, { force: true, recursive: true });
  if (what === 'fifo') execFileSync('mkfifo', [path]);
  else if (what === 'zero') symlinkSync('/dev/zero', path);
  else if (what === 'dir') mkdirSync(path);
  else if (what !== 'missing') throw new Error(what);
}

let fixtures;
async function makeFixtures() {
  if (fixtures) return fixtures;
  const dir = join(work, 'fixtures');
  mkdirSync(join(dir, 'optimizer'), { recursive: true });
  const f = { base: join(dir, 'base'), adapter: join(dir, 'adapter'), optimizer: join(dir, 'optimizer') };
  const res = await runWorkers(
    'fixture',
    [
      { what: 'adapter', base: f.base, adapter: f.adapter },
      { what: 'optimizer', dir: f.optimizer },
    ],
    { caseTimeoutMs: 120_000, shards: 1 },
  );
  for (const r of res) if (!r?.ok) throw new Error(`probe fixtures could not be made: ${JSON.stringify(r)}`);
  fixtures = f;
  return f;
}

/** Counts a worker result against what a case expects (invalid / harmless / either), as the checkpoint category does. */
function countLoad(t, c, res, extraSilent) {
  const expected = { invalid: 'a coded error', harmless: 'a load that works', either: 'a load that works or a coded error' };
  const repro = { what: c.desc, expect: expected[c.expect] };
  if (!res || res.died) count(t, 'crash', c.kind, { ...repro, got: res ? res.why : 'no result', detail: res?.stderr });
  else if (res.threw) {
    if (res.code) {
      count(t, 'coded', c.kind);
      if (c.expect === 'harmless') t.notes.push(`refused although harmless: ${c.desc}: [${res.code}] ${short(res.message, 120)}`);
    } else count(t, 'crash', c.kind, { ...repro, got: `uncoded ${res.name}: ${res.message}` });
  } else if (c.expect === 'invalid') count(t, 'silent', c.kind, { ...repro, got: `accepted${res.finite === false ? ' (non-finite results)' : ''}` });
  else if (res.finite === false) count(t, 'silent', c.kind, { ...repro, got: 'accepted, results not finite' });
  else if (extraSilent?.(res)) count(t, 'silent', c.kind, { ...repro, got: extraSilent(res) });
  else count(t, 'correct', c.kind);
}

// --- Category 6: LoRA adapters (loaded on the base) and `lamer merge`.

function adapterMutations(f, r) {
  const cfgText = readFileSync(join(f.adapter, 'adapter_config.json'), 'utf8');
  const model = st.readSafetensors(join(f.adapter, 'adapter_model.safetensors'));
  const names = [...model.tensors.keys()];
  const out = [];
  const add = (kind, desc, expect, apply) => out.push({ kind, desc, expect, apply });
  const cfg = (desc, expect, edit) =>
    add('adapter-config', `adapter_config.json: ${desc}`, expect, (dir) => {
      const j = JSON.parse(cfgText);
      edit(j);
      writeFileSync(join(dir, 'adapter_config.json'), JSON.stringify(j));
    });
  const weights = (kind, desc, expect, edit) =>
    add(kind, `adapter_model.safetensors: ${desc}`, expect, (dir) => st.editSafetensors(join(dir, 'adapter_model.safetensors'), edit));
  // Values: NaN, infinities and overflowing weights at random tensors and offsets.
  for (let i = 0; i < 12; i++) {
    const name = r.pick(names);
    const n = model.tensors.get(name).bytes.length / 4;
    const at = r.int(n);
    const [label, v] = r.pick([
      ['NaN', NaN],
      ['+Inf', Infinity],
      ['-Inf', -Infinity],
    ]);
    weights('adapter-values', `${name}[${at}] = ${label}`, 'invalid', (s) => s.tensors.get(name).bytes.writeFloatLE(v, 4 * at));
  }
  for (let i = 0; i < 4; i++) {
    const mod = r.pick(names.filter((n) => n.includes('lora_A'))).replace('.lora_A.weight', '');
    const v = r.pick([3e38, 1e30, 1e20]);
    weights('adapter-values', `${mod} lora_A and lora_B filled with ${v} (the update overflows)`, 'invalid', (s) => {
      for (const side of ['lora_A', 'lora_B']) {
        const b = s.tensors.get(`${mod}.${side}.weight`).bytes;
        for (let k = 0; k < b.length; k += 4) b.writeFloatLE(v, k);
      }
    });
  }
  for (const dtype of ['I32', 'U32', 'F16', 'BF16', 'F64', 'XX']) {
    const name = r.pick(names);
    weights('adapter-dtype', `${name} dtype ${dtype}`, 'invalid', (s) => (s.tensors.get(name).dtype = dtype));
  }
  {
    const name = r.pick(names);
    weights('adapter-shape', `${name} shape transposed`, 'invalid', (s) => s.tensors.get(name).shape.reverse());
    weights('adapter-shape', `${name} removed`, 'invalid', (s) => s.tensors.delete(name));
    weights('adapter-shape', `${name} renamed to a module the base lacks`, 'invalid', (s) => {
      s.tensors.set(name.replace('self_attn', 'no_such_block'), s.tensors.get(name));
      s.tensors.delete(name);
    });
  }
  for (let i = 0; i < 8; i++) {
    const at = 8 + r.int(200);
    const v = r.int(256);
    add('adapter-bytes', `adapter_model.safetensors header byte [${at}] = ${v}`, 'either', (dir) => {
      const p = join(dir, 'adapter_model.safetensors');
      const b = readFileSync(p);
      b[at] = v;
      writeFileSync(p, b);
    });
  }
  for (let i = 0; i < 4; i++) {
    const p = join(f.adapter, 'adapter_model.safetensors');
    const size = lstatSync(p).size;
    const at = r.int(size);
    add('adapter-bytes', `adapter_model.safetensors truncated to ${at} of ${size} bytes`, 'invalid', (dir) =>
      writeFileSync(join(dir, 'adapter_model.safetensors'), readFileSync(p).subarray(0, at)),
    );
  }
  // Config fields.
  cfg('lora_alpha removed (peft default 8)', 'harmless', (j) => delete j.lora_alpha);
  cfg('use_rslora true', 'harmless', (j) => (j.use_rslora = true));
  cfg('an unknown field', 'harmless', (j) => (j.zz_unknown = 1));
  cfg('base_model_name_or_path null', 'harmless', (j) => (j.base_model_name_or_path = null));
  cfg('use_rslora "yes"', 'invalid', (j) => (j.use_rslora = 'yes'));
  cfg('use_rslora 1', 'invalid', (j) => (j.use_rslora = 1));
  cfg('lora_alpha "4"', 'invalid', (j) => (j.lora_alpha = '4'));
  cfg('lora_alpha 1e308', 'invalid', (j) => (j.lora_alpha = 1e308));
  cfg('r 0', 'invalid', (j) => (j.r = 0));
  cfg('r -2', 'invalid', (j) => (j.r = -2));
  cfg('r 3 (the tensors have rank 2)', 'invalid', (j) => (j.r = 3));
  cfg('r "2"', 'invalid', (j) => (j.r = '2'));
  cfg('r 1.5', 'invalid', (j) => (j.r = 1.5));
  cfg('target_modules 5', 'invalid', (j) => (j.target_modules = 5));
  cfg('target_modules ["no_such_proj"]', 'invalid', (j) => (j.target_modules = ['no_such_proj']));
  cfg('peft_type "PREFIX_TUNING"', 'invalid', (j) => (j.peft_type = 'PREFIX_TUNING'));
  cfg('use_dora true', 'invalid', (j) => (j.use_dora = true));
  cfg('rank_pattern of another rank', 'invalid', (j) => (j.rank_pattern = { q_proj: 4 }));
  for (const [file, what, expect] of [
    ['adapter_config.json', 'fifo', 'invalid'],
    ['adapter_config.json', 'zero', 'invalid'],
    ['adapter_config.json', 'dir', 'invalid'],
    ['adapter_config.json', 'missing', 'invalid'],
    ['adapter_model.safetensors', 'fifo', 'invalid'],
    ['adapter_model.safetensors', 'zero', 'invalid'],
    ['adapter_model.safetensors', 'missing', 'invalid'],
  ]) {
    add(
      'adapter-file-kind',
      `${file} replaced by ${{ fifo: 'a named pipe', zero: 'a link to /dev/zero', dir: 'a folder', missing: 'nothing' }[what]}`,
      expect,
      (dir) => replaceWith(join(dir, file), what),
    );
  }
  for (const [desc, text] of [
    ['"{"', '{'],
    ['empty', ''],
    ['an array', '[]'],
    ['nested 100000 deep', `{"r": ${'['.repeat(100000)}${']'.repeat(100000)}}`],
  ])
    add('adapter-config', `adapter_config.json: ${desc}`, 'invalid', (dir) => writeFileSync(join(dir, 'adapter_config.json'), text));
  add('adapter-harmless', 'the adapter unchanged', 'harmless', () => {});
  return out;
}

async function probeAdapters() {
  const t = tally();
  const f = await makeFixtures();
  const r = rng(SEED * 31 + 6);
  const cases = sample(adapterMutations(f, r), r);
  const dirs = join(work, 'adapters');
  mkdirSync(dirs);
  const specs = cases.map((c, i) => {
    const dir = copyDir(f.adapter, join(dirs, `case-${i}`));
    c.apply(dir);
    return { base: f.base, dir };
  });
  const results = await runWorkers('adapter', specs, { caseTimeoutMs: 20_000 });
  results.forEach((res, i) => countLoad(t, cases[i], res));

  // `lamer merge`: an invalid adapter writes nothing, --out onto an input is refused, the base never changes.
  const baseBefore = contentSnapshot(f.base);
  const links = join(work, 'merge-links');
  mkdirSync(links);
  symlinkSync(f.base, join(links, 'to-base'));
  symlinkSync(dirname(f.base), join(links, 'to-parent'));
  symlinkSync(f.adapter, join(links, 'to-adapter'));
  const bad = cases.map((c, i) => ({ c, dir: specs[i].dir })).filter(({ c }) => c.expect === 'invalid');
  const merges = [
    ['merge --out', 'error', f.adapter, join(links, 'to-base')],
    ['merge --out', 'error', f.adapter, join(links, 'to-base', '.')],
    ['merge --out', 'error', f.adapter, join(links, 'to-parent', 'base')],
    ['merge --out', 'error', f.adapter, f.base],
    ['merge --out', 'error', f.adapter, join(f.base, '..', 'base')],
    ['merge --out', 'error', f.adapter, f.adapter],
    ['merge --out', 'error', f.adapter, join(links, 'to-adapter')],
    ['merge --out', 'ok', f.adapter, join(work, 'merged-ok')],
    ...Array.from({ length: Math.min(bad.length, scale(12)) }, () => r.pick(bad)).map(({ c, dir }) => [
      'merge invalid adapter',
      'error',
      dir,
      join(dir, 'merged'),
      c.desc,
    ]),
  ];
  const outs = await pool(merges, JOBS, ([, , adapter, out]) =>
    spawnWatched([process.execPath, '--max-old-space-size=2048', bin, 'merge', '--model', f.base, '--adapter', adapter, '--out', out], { timeoutMs: 30_000 }),
  );
  outs.forEach((res, i) => {
    const [kind, expect, adapter, out, desc] = merges[i];
    const what = `lamer merge --model BASE --adapter ${desc ? `(${desc})` : adapter === f.adapter ? 'ADAPTER' : adapter} --out ${out.split(work).join('TMP')}`;
    const changed =
      [...contentSnapshot(f.base)].filter(([p, v]) => baseBefore.get(p) !== v).length + [...baseBefore.keys()].filter((p) => !existsSync(p)).length;
    if (changed) {
      count(t, 'silent', kind, { what, expect: 'the base left as it was', got: `exit ${res.code}; ${changed} files of the base changed` });
      return;
    }
    const [cls, why] = classifyCli(res, expect === 'ok' ? 'either' : 'error', 'merge');
    if (expect === 'ok' && cls !== 'correct') count(t, cls === 'coded' ? 'coded' : cls, kind, { what, expect: 'exit 0', got: why });
    else if (cls === 'coded' && desc && existsSync(join(out, 'model.safetensors')))
      count(t, 'silent', kind, { what, expect: 'nothing written', got: `${why}, but ${out} holds a model` });
    else
      count(t, cls, kind, {
        what,
        expect: expect === 'ok' ? 'exit 0' : 'a coded error or usage refusal',
        got: why,
        detail: cls === 'crash' ? short(res.err.slice(-500), 300) : undefined,
      });
    if (expect === 'ok' && cls === 'coded') t.notes.push(`merge refused a valid adapter: ${why}`);
  });
  return t;
}

// --- Category 7: optimizer state and ZeRO shard files.

function optimizerCases(f, r) {
  const { s1, s2 } = { s1: join(f.optimizer, 's1.safetensors'), s2: join(f.optimizer, 's2.safetensors') };
  const stage0 = join(f.optimizer, 'stage0.safetensors');
  const lora0 = join(f.optimizer, 'lora0.safetensors');
  const out = [];
  const add = (kind, desc, expect, stages, make, step) => out.push({ kind, desc, expect, stages, make, step });
  const shard = (p, k, w) => st.zeroShardName(p, k, w);
  const cutTo = (from, world) => (p) => st.cutZeroSave(from, p, world);
  const then = (make, edit) => (p) => {
    make(p);
    edit(p);
  };
  // Valid sets: loaded and stepped (the step count read must be 2).
  for (const w of [2, 3, 4]) add('zero-valid', `a step-2 save cut for ${w} ranks`, 'harmless', [1, 2], cutTo(s2, w), 2);
  add('zero-valid', 'the one-rank step-2 save', 'harmless', [1, 2], (p) => copyFileSync(s2, p), 2);
  add('zero-valid', 'a stage-0 step-2 save', 'harmless', [0], (p) => copyFileSync(stage0, p), 2);
  // Shards from the wrong place.
  for (let i = 0; i < 3; i++) {
    const w = 2 + r.int(3);
    const a = 1 + r.int(w - 1);
    const b = w === 2 ? 0 : 1 + ((a - 1 + 1 + r.int(w - 2)) % (w - 1));
    if (b !== 0) {
      add(
        'zero-shards',
        `${w} ranks, shards ${a} and ${b} swapped`,
        'invalid',
        [1, 2],
        then(cutTo(s2, w), (p) => {
          const x = readFileSync(shard(p, a, w));
          copyFileSync(shard(p, b, w), shard(p, a, w));
          writeFileSync(shard(p, b, w), x);
        }),
      );
      add(
        'zero-shards',
        `${w} ranks, shard ${b} copied over shard ${a}`,
        'invalid',
        [1, 2],
        then(cutTo(s2, w), (p) => copyFileSync(shard(p, b, w), shard(p, a, w))),
      );
    }
    add('zero-shards', `${w} ranks, shard ${a} from the step-1 save`, 'invalid', [1, 2], (p) => {
      st.cutZeroSave(s1, `${p}.old.safetensors`, w);
      st.cutZeroSave(s2, p, w);
      copyFileSync(shard(`${p}.old.safetensors`, a, w), shard(p, a, w));
    });
    for (const what of ['missing', 'fifo', 'zero', 'dir'])
      add(
        'zero-shards',
        `${w} ranks, shard ${a} replaced by ${what}`,
        'invalid',
        [1, 2],
        then(cutTo(s2, w), (p) => replaceWith(shard(p, a, w), what)),
      );
    add(
      'zero-shards',
      `${w} ranks, shard ${a} of another save (zero_save changed)`,
      'invalid',
      [1, 2],
      then(cutTo(s2, w), (p) => st.editSafetensors(shard(p, a, w), (s) => (s.metadata.zero_save = 'ffffffffffffffff'))),
    );
    add(
      'zero-shards',
      `${w} ranks, shard ${a} truncated`,
      'invalid',
      [1, 2],
      then(cutTo(s2, w), (p) => {
        const b2 = readFileSync(shard(p, a, w));
        writeFileSync(shard(p, a, w), b2.subarray(0, r.int(b2.length)));
      }),
    );
  }
  // The main file's metadata.
  const meta = (desc, edit, stages = [1, 2], expect = 'invalid') =>
    add(
      'zero-metadata',
      `3 ranks, ${desc}`,
      expect,
      stages,
      then(cutTo(s2, 3), (p) => st.editSafetensors(p, (s) => edit(s.metadata))),
    );
  meta('zero_world 2', (m) => (m.zero_world = '2'));
  meta('zero_world 4', (m) => (m.zero_world = '4'));
  meta('zero_world removed', (m) => delete m.zero_world, [0, 1, 2]);
  meta('zero_world "three"', (m) => (m.zero_world = 'three'));
  meta('zero_world "-3"', (m) => (m.zero_world = '-3'));
  meta('zero_world "1e9"', (m) => (m.zero_world = '1e9'));
  meta('zero_chunks one chunk larger', (m) => (m.zero_chunks = m.zero_chunks.replace(/\d+/, (n) => String(Number(n) + 1))));
  meta('zero_chunks removed', (m) => delete m.zero_chunks);
  meta('zero_chunks "x,y"', (m) => (m.zero_chunks = 'x,y'));
  meta('step "1e9"', (m) => (m.step = '1e9'), [0, 1, 2]);
  meta('step "-1"', (m) => (m.step = '-1'), [0, 1, 2]);
  meta('step "2.5"', (m) => (m.step = '2.5'), [0, 1, 2]);
  meta('step "abc"', (m) => (m.step = 'abc'), [0, 1, 2]);
  meta('step "99999999999999999999"', (m) => (m.step = '99999999999999999999'), [0, 1, 2]);
  // Moments: NaN, infinite, negative second moments, integer-typed, short.
  const moment = (s, kind) => r.pick([...s.tensors].filter(([n]) => n.startsWith(`${kind}.`)));
  for (let i = 0; i < 6; i++) {
    const [label, kind, v] = r.pick([
      ['NaN first moment', 'exp_avg', NaN],
      ['NaN second moment', 'exp_avg_sq', NaN],
      ['+Inf second moment', 'exp_avg_sq', Infinity],
      ['-Inf first moment', 'exp_avg', -Infinity],
      ['negative second moment', 'exp_avg_sq', -1e-3],
    ]);
    const whole = r.int(2) === 0;
    add('zero-moments', `${whole ? 'a stage-0 save' : '2 ranks'}, a ${label}`, 'invalid', [0, 1, 2], (p) => {
      if (whole) copyFileSync(stage0, p);
      else st.cutZeroSave(s2, p, 2);
      st.editSafetensors(p, (s) => {
        const [, e] = moment(s, kind);
        e.bytes.writeFloatLE(v, 4 * r.int(e.bytes.length / 4));
      });
    });
  }
  for (const dtype of ['I32', 'F16', 'I64']) {
    add(
      'zero-moments',
      `2 ranks, a second moment of dtype ${dtype}`,
      'invalid',
      [0, 1, 2],
      then(cutTo(s2, 2), (p) => st.editSafetensors(p, (s) => (moment(s, 'exp_avg_sq')[1].dtype = dtype))),
    );
  }
  // Parameter sets.
  add('zero-params', "a LoRA policy's stage-0 state (other parameters)", 'invalid', [0, 1, 2], (p) => copyFileSync(lora0, p));
  add('zero-params', 'a stage-0 state missing one parameter', 'invalid', [0, 1, 2], (p) => {
    copyFileSync(stage0, p);
    st.editSafetensors(p, (s) => {
      const name = r.pick([...s.tensors.keys()].filter((n) => n.startsWith('exp_avg.')));
      for (const k of [...s.tensors.keys()]) if (k.endsWith(name.slice('exp_avg'.length))) s.tensors.delete(k);
    });
  });
  add('zero-params', 'a stage-0 state with a parameter the model lacks', 'invalid', [0, 1, 2], (p) => {
    copyFileSync(stage0, p);
    st.editSafetensors(p, (s) => {
      const [name, e] = moment(s, 'exp_avg');
      s.tensors.set(`exp_avg.model.no_such.weight`, e);
      s.tensors.set(name.replace(/^exp_avg/, 'exp_avg_sq').replace(/\.[^.]*$/, '.zz'), e);
    });
  });
  // Random bytes anywhere in a shard (either: refused, or a load whose next step stays finite).
  for (let i = 0; i < 6; i++) {
    add(
      'zero-bytes',
      `2 ranks, random bytes in the shard`,
      'either',
      [1, 2],
      then(cutTo(s2, 2), (p) => {
        const b = readFileSync(shard(p, 1, 2));
        for (let k = 0, n = 1 + r.int(6); k < n; k++) b[r.int(b.length)] = r.int(256);
        writeFileSync(shard(p, 1, 2), b);
      }),
    );
  }
  for (const what of ['fifo', 'zero', 'missing']) add('zero-files', `the main file replaced by ${what}`, 'invalid', [0, 1, 2], (p) => replaceWith(p, what));
  return out;
}

async function probeOptimizer() {
  const t = tally();
  const f = await makeFixtures();
  const r = rng(SEED * 31 + 7);
  const all = optimizerCases(f, r).flatMap((c) => c.stages.map((stage) => ({ ...c, stage, desc: `${c.desc}, loaded at ZeRO stage ${stage}` })));
  const cases = sample(all, r);
  const dir = join(work, 'optimizer');
  mkdirSync(dir);
  const specs = cases.map((c, i) => {
    const path = join(dir, `case-${i}`, 'optimizer.safetensors');
    mkdirSync(dirname(path));
    c.make(path);
    return { path, stage: c.stage };
  });
  const results = await runWorkers('optimizer', specs, { caseTimeoutMs: 30_000 });
  results.forEach((res, i) => {
    const c = cases[i];
    countLoad(t, c, res, (x) => (c.step !== undefined && x.step !== c.step ? `loaded, step read as ${x.step}, saved at ${c.step}` : undefined));
  });
  return t;
}

// --- Category 8: a run's trainer state and checkpoints/latest, through `lamer train --resume`.

function runConfig(dir, name, iterations, extra = {}) {
  const path = join(dir, `${name.replace(/\W/g, '_')}-${iterations}.yaml`);
  const train = { iterations, evalEvery: 0, checkpointEvery: 1, ...(extra.train ?? {}) };
  writeFileSync(
    path,
    JSON.stringify({
      name,
      runsDir: dir,
      method: 'lamer',
      model: { init: { preset: 'tiny', tokenizer: 'compact', seed: 4 }, promptStyle: 'compact' },
      env: { name: 'minesweeper', options: { rows: 4, cols: 4, mines: 2, maxTurns: 3 } },
      trial: { episodes: 2 },
      rollout: { tasksPerIteration: 2, groupSize: 2, maxResponseTokens: 12 },
      optim: { lr: 3e-3, miniBatchRows: 8 },
      eval: { tasks: 3 },
      ...extra,
      train,
    }),
  );
  return path;
}

/** The iterations of a run's metrics.jsonl events of one type (null when the file is missing or unreadable). */
function eventsOf(runDir, type) {
  try {
    return readFileSync(join(runDir, 'metrics.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l))
      .filter((e) => e.type === type)
      .map((e) => e.iteration);
  } catch {
    return null;
  }
}
const iterationsOf = (runDir) => eventsOf(runDir, 'iteration');

async function probeRunState() {
  const t = tally();
  const dir = join(work, 'runstate');
  mkdirSync(dir);
  const first = await spawnWatched([process.execPath, bin, 'train', '--config', runConfig(dir, 'one', 2), '--quiet'], { timeoutMs: 120_000 });
  if (first.code !== 0) throw new Error(`the run state fixture did not train: ${first.err}`);
  const runDir = join(dir, 'one');
  // A run cut short in its final evaluation: what `--resume` continues (a finished run has nothing to resume).
  rmSync(join(runDir, 'eval.json'));
  writeFileSync(
    join(runDir, 'metrics.jsonl'),
    readFileSync(join(runDir, 'metrics.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => !l.includes('"type":"eval"'))
      .join('\n'),
  );
  const ck = (n) => `ckpt-${String(n).padStart(6, '0')}`;
  const latest = readFileSync(join(runDir, 'checkpoints', 'latest'), 'utf8').trim();
  const trainerText = readFileSync(join(runDir, 'checkpoints', latest, 'trainer.json'), 'utf8');
  const r = rng(SEED * 31 + 8);
  const cases = [];
  const add = (kind, desc, expect, apply, setArgs = []) => cases.push({ kind, desc, expect, apply, setArgs });
  const L = (d) => join(d, 'checkpoints', 'latest');
  const T = (d) => join(d, 'checkpoints', latest, 'trainer.json');
  const trainer = (desc, expect, edit) =>
    add('trainer.json', `trainer.json: ${desc}`, expect, (d) => {
      const j = JSON.parse(trainerText);
      edit(j);
      writeFileSync(T(d), JSON.stringify(j));
    });
  add('harmless', 'the run unchanged (resumed to 3 iterations)', 'harmless', () => {});
  // `latest` lost or naming no checkpoint folder: resumed from the newest complete folder (src/train/checkpoint.ts).
  add('latest', 'latest removed', 'either', (d) => rmSync(L(d)));
  add('latest', 'latest empty', 'either', (d) => writeFileSync(L(d), ''));
  add('latest', 'latest names ckpt-999999', 'either', (d) => writeFileSync(L(d), ck(999999)));
  add('latest', 'latest names ../../x', 'either', (d) => writeFileSync(L(d), '../../x'));
  add('latest', 'latest names /etc', 'either', (d) => writeFileSync(L(d), '/etc'));
  add('latest', 'latest 1 MB of text', 'invalid', (d) => writeFileSync(L(d), 'x'.repeat(2 ** 20)));
  for (const what of ['fifo', 'zero', 'dir']) add('latest', `latest replaced by ${what}`, 'invalid', (d) => replaceWith(L(d), what));
  add('latest', 'the newest checkpoint folder removed (latest names it)', 'either', (d) => rmSync(join(d, 'checkpoints', latest), { recursive: true }));
  for (const what of ['fifo', 'zero', 'dir', 'missing']) add('trainer.json', `trainer.json replaced by ${what}`, 'invalid', (d) => replaceWith(T(d), what));
  for (const [desc, text] of [
    ['"{"', '{'],
    ['empty', ''],
    ['null', 'null'],
    ['nested 100000 deep', `{"iteration": ${'['.repeat(100000)}${']'.repeat(100000)}}`],
  ])
    add('trainer.json', `trainer.json: ${desc}`, 'invalid', (d) => writeFileSync(T(d), text));
  trainer('iteration 99 (past the run end, 3)', 'invalid', (j) => (j.iteration = 99));
  trainer('iteration 1e9', 'invalid', (j) => (j.iteration = 1e9));
  trainer('iteration -1', 'invalid', (j) => (j.iteration = -1));
  trainer('iteration 1.5', 'invalid', (j) => (j.iteration = 1.5));
  trainer('iteration "2"', 'invalid', (j) => (j.iteration = '2'));
  trainer('iteration removed', 'invalid', (j) => delete j.iteration);
  trainer('method "gigpo"', 'invalid', (j) => (j.method = 'gigpo'));
  trainer('model.sha256 changed', 'invalid', (j) => (j.model.sha256 = '0'.repeat(64)));
  trainer('a file hash changed', 'invalid', (j) => (j.model.files['optimizer.safetensors'] = '0'.repeat(64)));
  // The model's own hash (model.sha256) still matches, so the same model is resumed; the base record only explains a mismatch.
  trainer('the base hash changed', 'either', (j) => (j.model.base[0].sha256 = '0'.repeat(64)));
  trainer('evalPending true', 'either', (j) => (j.evalPending = true));
  const other = join(runDir, 'checkpoints', ck(1));
  const hasOther = existsSync(other) && ck(1) !== latest;
  for (const file of ['optimizer.safetensors', 'model.safetensors']) {
    if (hasOther)
      add('checkpoint files', `${file} of the earlier checkpoint`, 'invalid', (d) =>
        copyFileSync(join(d, 'checkpoints', ck(1), file), join(d, 'checkpoints', latest, file)),
      );
    for (const what of ['fifo', 'zero', 'missing'])
      add('checkpoint files', `${file} replaced by ${what}`, 'invalid', (d) => replaceWith(join(d, 'checkpoints', latest, file), what));
    add('checkpoint files', `${file} truncated`, 'invalid', (d) => {
      const p = join(d, 'checkpoints', latest, file);
      const b = readFileSync(p);
      writeFileSync(p, b.subarray(0, r.int(b.length)));
    });
  }
  add('checkpoint files', 'optimizer.safetensors step "1e9" (its hash updated in trainer.json)', 'invalid', (d) => {
    const p = join(d, 'checkpoints', latest, 'optimizer.safetensors');
    st.editSafetensors(p, (s) => (s.metadata.step = '1e9'));
    const j = JSON.parse(trainerText);
    j.model.files['optimizer.safetensors'] = createHash('sha256').update(readFileSync(p)).digest('hex');
    writeFileSync(T(d), JSON.stringify(j));
  });
  add('config on resume', 'model.init.seed changed', 'invalid', () => {}, ['--set', 'model.init.seed=5']);
  add('config on resume', 'model.init.preset changed', 'invalid', () => {}, ['--set', 'model.init.preset=small']);
  add('config on resume', 'a LoRA rank added', 'invalid', () => {}, ['--set', 'model.lora={r: 4, alpha: 8}']);
  add('config on resume', 'method changed', 'invalid', () => {}, ['--method', 'gigpo']);
  const chosen = sample(cases, r);
  const results = await pool(chosen, JOBS, async (c, i) => {
    const caseDir = join(dir, `case-${i}`);
    copyDir(runDir, join(caseDir, 'one'));
    c.apply(join(caseDir, 'one'));
    const cfg = runConfig(caseDir, 'one', 3);
    const argv = ['train', '--config', cfg, '--resume', '--quiet', ...c.setArgs];
    const res = await spawnWatched([process.execPath, '--max-old-space-size=2048', bin, ...argv], { timeoutMs: 60_000 });
    return { res, argv, its: iterationsOf(join(caseDir, 'one')), lock: existsSync(join(caseDir, 'one', '.lock')) };
  });
  results.forEach(({ res, its, lock }, i) => {
    const c = chosen[i];
    const what = `${c.desc}, then lamer train --resume ${c.setArgs.join(' ')} (a 2-iteration run cut short in its final evaluation, resumed to 3 iterations)`;
    if (lock) return count(t, 'silent', c.kind, { what, expect: 'the lock released at exit', got: `exit ${res.code}; .lock left` });
    const [cls, why] = classifyCli(res, c.expect === 'invalid' ? 'error' : 'either', 'train');
    if (cls === 'correct') {
      // Each iteration once, or (resumed from an earlier checkpoint) the lost ones again, in order, up to 3.
      const last = its ? its.lastIndexOf(1) : -1;
      const good = its && its.join(',').startsWith('1,2') && its.at(-1) === 3 && its.every((n, k) => k === 0 || n <= its[k - 1] + 1) && last === 0;
      if (!good) return count(t, 'silent', c.kind, { what, expect: 'iterations up to 3, none skipped', got: `exit 0, iterations ${its?.join(',')}` });
    }
    if (cls === 'coded' && c.expect === 'harmless') t.notes.push(`refused although harmless: ${c.desc}: ${why}`);
    count(t, cls, c.kind, {
      what,
      expect: c.expect === 'invalid' ? 'a coded error' : 'a resumed run or a coded error',
      got: why,
      detail: cls === 'crash' ? short(res.err.slice(-500), 300) : undefined,
    });
  });
  return t;
}

// --- Category 9: WebShop's original data files and ALFWorld game folders.

async function dataCases(r) {
  const out = [];
  const add = (kind, desc, expect, env, make) => out.push({ kind, desc, expect, env, make });
  const WS = join(root, 'test', 'fixtures', 'webshop');
  const wsNames = { products: 'items_shuffle.json', attributes: 'items_ins_v2.json', humanInstructions: 'items_human_ins.json' };
  const products = JSON.parse(readFileSync(join(WS, wsNames.products), 'utf8'));
  const webshop = (desc, expect, edit, goals = 'synthetic') =>
    add('webshop-files', desc, expect, 'webshop', (dir) => {
      const files = {};
      for (const [role, name] of Object.entries(wsNames)) copyFileSync(join(WS, name), (files[role] = join(dir, name)));
      edit(files, dir);
      return { source: 'original', files, goals, split: 'lamer' };
    });
  webshop('the fixture unchanged', 'harmless', () => {});
  for (const role of Object.keys(wsNames))
    for (const what of ['fifo', 'zero', 'dir', 'missing'])
      webshop(`${role} replaced by ${what}`, 'invalid', (f) => replaceWith(f[role], what), role === 'humanInstructions' ? 'human' : 'synthetic');
  webshop('products a sparse 600 MB file', 'invalid', (f) => truncateSync(f.products, 600 * 2 ** 20));
  const editP = (edit) => (f) => {
    const p = structuredClone(products);
    edit(p);
    writeFileSync(f.products, JSON.stringify(p));
  };
  for (let i = 0; i < 3; i++) {
    const n = [50_000, 2_000_000, 30_000_000][i];
    webshop(
      `a product description of ${n} characters`,
      n > 100_000 ? 'invalid' : 'harmless',
      editP((p) => (p[0].full_description = 'word '.repeat(n / 5))),
    );
  }
  for (let i = 0; i < 4; i++) {
    const k = 2 + r.int(7);
    const v = 2 + r.int(11);
    webshop(
      `a product with ${k} options of ${v} values (${v ** k} goals)`,
      v ** k > 400_000 ? 'invalid' : 'either',
      editP((p) => {
        p[0].customization_options = Object.fromEntries(
          Array.from({ length: k }, (_, a) => [`Option ${a}`, Array.from({ length: v }, (_, b) => ({ value: `value ${b}`, image: null }))]),
        );
      }),
    );
  }
  webshop(
    '7 options of 10 values',
    'invalid',
    editP((p) => {
      p[0].customization_options = Object.fromEntries(
        Array.from({ length: 7 }, (_, a) => [`Option ${a}`, Array.from({ length: 10 }, (_, b) => ({ value: `value ${b}`, image: null }))]),
      );
    }),
  );
  webshop(
    '20,000 products of one long bullet point each',
    'either',
    editP((p) => {
      for (let i = 0; i < 20_000; i++) p.push({ ...p[0], asin: `B${String(i).padStart(9, '0')}`, small_description: ['bullet '.repeat(2000)] });
    }),
  );
  for (const [desc, text] of [
    ['"["', '['],
    ['empty', ''],
    ['an object', '{}'],
    ['nested 100000 deep', `${'['.repeat(100000)}${']'.repeat(100000)}`],
    ['a list of numbers', '[1, 2, 3]'],
  ])
    webshop(`products: ${desc}`, 'invalid', (f) => writeFileSync(f.products, text));

  // ALFWorld: one game per data folder, played through createEnv('alfworld', { source: 'tw-pddl', dataDir }).
  const { kitchenFile } = await import('./envs/alfworld/fixtures.ts');
  const things = (n) => Array.from({ length: n }, (_, i) => `t${i + 1}`);
  const domain = (actions = '', predicates = '') => `(define (domain tiny)
  (:requirements :adl :typing)
  (:types thing)
  (:predicates (p ?x - thing) (q ?x - thing) (seen ?x - thing) ${predicates})
  (:action look :parameters (?x - thing) :precondition (p ?x) :effect (seen ?x))
  ${actions})`;
  const problem = (n, init = '', goal = '(seen t1)') => `(define (problem tiny1) (:domain tiny)
  (:objects ${things(n).join(' ')} - thing)
  (:init ${things(n)
    .map((x) => `(p ${x})`)
    .join(' ')} ${init})
  (:goal ${goal}))`;
  const grammar = (rules = {}) => {
    const all = { intro: [{ rhs: 'You see things.' }], ...rules };
    return `grammar :: """${JSON.stringify(all)}""";\naction look { template :: "look at {x}"; feedback :: "You look."; }\n`;
  };
  const tiny = (parts = {}) => ({ pddl_domain: domain(), pddl_problem: problem(3), grammar: grammar(), solvable: true, walkthrough: null, ...parts });
  const game = (desc, expect, file, split = 'train', tweak) =>
    add('alfworld-games', desc, expect, 'alfworld', (dir) => {
      const trial = join(dir, 'd', 'train', 'pick_and_place_simple-Apple-None-Cabinet-1', 'trial_1');
      mkdirSync(trial, { recursive: true });
      writeFileSync(join(trial, 'game.tw-pddl'), typeof file === 'string' ? file : JSON.stringify(file));
      writeFileSync(join(trial, 'traj_data.json'), JSON.stringify({ task_type: 'pick_and_place_simple' }));
      tweak?.(trial, dir);
      return { source: 'tw-pddl', dataDir: join(dir, 'd'), train: [split], eval: [] };
    });
  game('the kitchen fixture', 'harmless', kitchenFile());
  game('the tiny game', 'harmless', tiny());
  for (let i = 0; i < 3; i++) {
    const depth = r.pick([10, 200, 300, 5_000, 100_000]);
    const deep = '(not '.repeat(depth) + '(seen t1)' + ')'.repeat(depth);
    game(`a goal nested ${depth} deep`, depth > 250 ? 'invalid' : 'either', tiny({ pddl_problem: problem(3, '', deep) }));
  }
  game(
    'a precondition nested 100,000 deep',
    'invalid',
    tiny({
      pddl_domain: domain(`(:action deep :parameters (?x - thing) :precondition ${'(and '.repeat(100_000)}(p ?x)${')'.repeat(100_000)} :effect (q ?x))`),
    }),
  );
  game('a grammar rule that derives itself', 'invalid', tiny({ grammar: grammar({ intro: [{ rhs: '#loop#' }], loop: [{ rhs: '#loop#' }] }) }));
  game(
    'a grammar rule that grows its text forever',
    'invalid',
    tiny({ grammar: grammar({ intro: [{ rhs: '#grow#' }], grow: [{ rhs: 'more text #grow#' }] }) }),
  );
  for (let i = 0; i < 2; i++) {
    const n = 5 + r.int(26);
    const ors = Array.from({ length: n }, () => '(or (p ?x) (q ?x))').join(' ');
    game(
      `a precondition with ${n} ors`,
      n > 20 ? 'invalid' : 'either',
      tiny({ pddl_domain: domain(`(:action many :parameters (?x - thing) :precondition (and ${ors}) :effect (q ?x))`) }),
    );
  }
  for (let i = 0; i < 2; i++) {
    const k = 2 + r.int(4);
    const n = r.pick([20, 60, 200]);
    const params = Array.from({ length: k }, (_, a) => `?v${a}`).join(' ');
    game(
      `an action of ${k} unconstrained parameters over ${n} objects`,
      n ** k > 1e8 ? 'invalid' : 'either',
      tiny({ pddl_domain: domain(`(:action free :parameters (${params} - thing) :precondition () :effect (q ?v0))`), pddl_problem: problem(n) }),
    );
  }
  const join6 = ['a', 'b', 'c', 'd', 'e', 'f'].map((v) => `p(${v}:thing)`).join(' & ') + ' & q(z:thing)';
  game(
    'a grammar condition joining six queries over 60 facts',
    'invalid',
    tiny({ pddl_problem: problem(60), grammar: grammar({ intro: [{ rhs: 'joined', condition: join6 }, { rhs: 'plain' }] }) }),
  );
  game('text after the last ) of the domain', 'invalid', tiny({ pddl_domain: `${domain()} (extra)` }));
  game('an undeclared predicate in the goal', 'invalid', tiny({ pddl_problem: problem(3, '', '(nowhere t1)') }));
  game('a type cycle', 'invalid', tiny({ pddl_domain: domain().replace('(:types thing)', '(:types thing - box box - thing)') }));
  game('game.tw-pddl not JSON', 'invalid', '{"pddl_domain": ');
  game('game.tw-pddl nested 100000 deep', 'invalid', `{"pddl_domain": ${'['.repeat(100000)}${']'.repeat(100000)}}`);
  for (const [file, what] of [
    ['game.tw-pddl', 'fifo'],
    ['game.tw-pddl', 'zero'],
    ['traj_data.json', 'fifo'],
    ['traj_data.json', 'zero'],
  ])
    game(`${file} replaced by ${what}`, 'invalid', kitchenFile(), 'train', (trial) => replaceWith(join(trial, file), what));
  game('game.tw-pddl a sparse 100 MB file', 'invalid', kitchenFile(), 'train', (trial) => truncateSync(join(trial, 'game.tw-pddl'), 100 * 2 ** 20));
  game('split ../dx/train, a sibling folder sharing the prefix', 'invalid', kitchenFile(), '../dx/train', (trial, dir) => {
    cpSync(join(dir, 'd'), join(dir, 'dx'), { recursive: true });
    rmSync(join(dir, 'd', 'train'), { recursive: true });
    mkdirSync(join(dir, 'd', 'train'));
  });
  game("split .. (the data folder's parent)", 'invalid', kitchenFile(), '..');
  game('split a link to a folder outside the data folder', 'either', kitchenFile(), 'linked', (trial, dir) =>
    symlinkSync(join(dir, 'd', 'train'), join(dir, 'd', 'linked')),
  );
  game('a folder nested 200 deep under the split', 'either', kitchenFile(), 'train', (trial, dir) => {
    let p = join(dir, 'd', 'train');
    for (let i = 0; i < 200; i++) p = join(p, 'n');
    mkdirSync(p, { recursive: true });
  });
  return out;
}

async function probeData() {
  const t = tally();
  const r = rng(SEED * 31 + 9);
  const cases = sample(await dataCases(r), r);
  const dir = join(work, 'data');
  mkdirSync(dir);
  const specs = cases.map((c, i) => {
    const d = join(dir, `case-${i}`);
    mkdirSync(d);
    return { env: c.env, options: c.make(d), seed: 1 + r.int(1000) };
  });
  const results = await runWorkers('data', specs, { caseTimeoutMs: 20_000 });
  results.forEach((res, i) => countLoad(t, cases[i], res, (x) => (x.valid === false ? 'a malformed step result' : undefined)));
  return t;
}

// --- Category 10: two processes on one run folder, on a job folder and its method folders.

async function probeConcurrency() {
  const t = tally();
  const dir = join(work, 'concurrency');
  mkdirSync(dir);
  const jobConfig = (d, iterations) => {
    const path = join(d, 'job.yaml');
    writeFileSync(
      path,
      JSON.stringify({
        name: 'job',
        runsDir: d,
        compare: ['lamer', 'gigpo'],
        model: { init: { preset: 'tiny', tokenizer: 'compact', seed: 4 }, promptStyle: 'compact' },
        env: { name: 'minesweeper', options: { rows: 4, cols: 4, mines: 2, maxTurns: 2 } },
        trial: { episodes: 2 },
        rollout: { tasksPerIteration: 2, groupSize: 2, maxResponseTokens: 8 },
        optim: { lr: 1e-3, miniBatchRows: 8 },
        train: { iterations, evalEvery: 0, checkpointEvery: 1 },
        eval: { tasks: 3 },
        sft: { trials: 4, steps: 1, reflectSteps: 0, batchRows: 4 },
      }),
    );
    return path;
  };
  // [kind, description, first (argv builder), when the second starts (a path that must exist), second (argv builder), folder whose metrics must be 1..n]
  const long = 20;
  const cases = [
    [
      'same folder',
      'two lamer train on one run name, the second --force',
      (d) => ['train', '--config', runConfig(d, 'one', long), '--quiet'],
      (d) => join(d, 'one', 'metrics.jsonl'),
      (d) => ['train', '--config', runConfig(d, 'one', long), '--quiet', '--force'],
      (d) => join(d, 'one'),
    ],
    [
      'same folder',
      'two lamer train on one run name, the second --resume',
      (d) => ['train', '--config', runConfig(d, 'one', long), '--quiet'],
      (d) => join(d, 'one', 'checkpoints', 'latest'),
      (d) => ['train', '--config', runConfig(d, 'one', long), '--quiet', '--resume'],
      (d) => join(d, 'one'),
    ],
    [
      'method folder of a job',
      'a job runs; lamer train --name job/lamer --force',
      (d) => ['train', '--config', jobConfig(d, long), '--quiet'],
      (d) => join(d, 'job', 'lamer', 'metrics.jsonl'),
      (d) => ['train', '--config', runConfig(d, 'job/lamer', long), '--quiet', '--force'],
      (d) => join(d, 'job', 'lamer'),
    ],
    [
      'method folder of a job',
      'a job runs; lamer train --name job/lamer --resume',
      (d) => ['train', '--config', jobConfig(d, long), '--quiet'],
      (d) => join(d, 'job', 'lamer', 'checkpoints', 'latest'),
      (d) => ['train', '--config', runConfig(d, 'job/lamer', long), '--quiet', '--resume'],
      (d) => join(d, 'job', 'lamer'),
    ],
    [
      'parent folder',
      'a run on job/lamer; the job on job --force',
      (d) => ['train', '--config', runConfig(d, 'job/lamer', long), '--quiet'],
      (d) => join(d, 'job', 'lamer', 'metrics.jsonl'),
      (d) => ['train', '--config', jobConfig(d, long), '--quiet', '--force'],
      (d) => join(d, 'job', 'lamer'),
    ],
    [
      'parent folder',
      'a run on a/b; lamer train --name a --force',
      (d) => ['train', '--config', runConfig(d, 'a/b', long), '--quiet'],
      (d) => join(d, 'a', 'b', 'metrics.jsonl'),
      (d) => ['train', '--config', runConfig(d, 'a', 3), '--quiet', '--force'],
      (d) => join(d, 'a', 'b'),
    ],
    [
      'child folder',
      'a run on a; lamer train --name a/b',
      (d) => ['train', '--config', runConfig(d, 'a', long), '--quiet'],
      (d) => join(d, 'a', 'metrics.jsonl'),
      (d) => ['train', '--config', runConfig(d, 'a/b', 3), '--quiet'],
      (d) => join(d, 'a'),
    ],
  ];
  const chosen = QUICK ? cases.filter((_, i) => i % 3 === SEED % 3) : cases;
  // One pair at a time: the first must still be running when the second starts.
  for (const [i, [kind, desc, firstArgv, ready, secondArgv, folder]] of chosen.entries()) {
    const d = join(dir, `case-${i}`);
    mkdirSync(d);
    const firstP = spawnWatched([process.execPath, bin, ...firstArgv(d)], { timeoutMs: 300_000 });
    const t0 = performance.now();
    while (!existsSync(ready(d)) && performance.now() - t0 < 120_000) await new Promise((res) => setTimeout(res, 100));
    const second = await spawnWatched([process.execPath, bin, ...secondArgv(d)], { timeoutMs: 120_000 });
    const first = await firstP;
    const its = iterationsOf(folder(d));
    const want = Array.from({ length: long }, (_, k) => k + 1).join(',');
    const what = `${desc} (the second started once ${ready(d).slice(d.length + 1)} existed)`;
    if (first.code !== 0)
      count(t, first.killed || first.signal ? 'crash' : 'silent', kind, {
        what,
        expect: 'the first run finishes (exit 0)',
        got: `exit ${first.code ?? first.signal}: ${short(first.err.slice(-300))}`,
      });
    else if (its?.join(',') !== want)
      count(t, 'silent', kind, {
        what,
        expect: `iterations ${1}..${long} once each in ${folder(d).slice(d.length + 1)}/metrics.jsonl`,
        got: `${short(its?.join(',') ?? 'no metrics.jsonl', 200)}`,
      });
    else if (second.code === 0) count(t, 'silent', kind, { what, expect: 'the second refused (E_LOCKED)', got: 'exit 0' });
    else {
      const [cls, why] = classifyCli(second, 'error', 'train');
      count(t, cls, kind, { what, expect: 'the second refused (E_LOCKED)', got: why });
      if (cls === 'coded' && why !== 'E_LOCKED') t.notes.push(`${desc}: refused with ${why}, not E_LOCKED`);
    }
    const locks = [folder(d), dirname(folder(d))].map((f) => join(f, '.lock')).filter((f) => existsSync(f));
    if (locks.length) count(t, 'silent', kind, { what, expect: 'no lock left after both exit', got: `${locks.join(', ')} left` });
  }
  return t;
}

// --- Category 11: SIGINT at each phase of a run, then --resume.

async function probeSignals() {
  const t = tally();
  const dir = join(work, 'signals');
  mkdirSync(dir);
  // [phase, the stderr text after which SIGINT is sent, how many SIGINTs]
  const phases = [
    ['start-up', null, 1],
    ['rollout', 'iter 2 rollout', 1],
    ['update', 'iter 2 rollout: 100%', 1],
    ['after an iteration (checkpoint save)', '[lamer] iter 2/', 1],
    ['evaluation', 'eval lamer', 1],
    ['evaluation, twice', 'eval lamer', 2],
    ['rollout, twice', 'iter 3 rollout', 2],
  ];
  const chosen = QUICK ? phases.filter((_, i) => i % 3 === SEED % 3) : phases;
  for (const [i, [phase, marker, times]] of chosen.entries()) {
    const d = join(dir, `case-${i}`);
    mkdirSync(d);
    const cfg = runConfig(d, 'one', 4, { train: { evalEvery: 2 }, eval: { tasks: 6 } });
    const child = spawn(process.execPath, [bin, 'train', '--config', cfg], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
    children.add(child);
    let err = '';
    let sentAt = null;
    const send = () => {
      if (sentAt !== null) return;
      sentAt = performance.now();
      for (let k = 0; k < times; k++) setTimeout(() => child.kill('SIGINT'), k * 100);
    };
    if (marker === null) setTimeout(send, 300 + r0(SEED, i) * 700);
    child.stderr.on('data', (b) => {
      err += b.toString();
      if (marker !== null && err.includes(marker)) send();
    });
    const exit = await new Promise((res) => {
      const t0 = performance.now();
      let peak = 0;
      const guard = setInterval(() => {
        peak = Math.max(peak, rssMb(child.pid));
        if (sentAt !== null && performance.now() - sentAt > 30_000) child.kill('SIGKILL');
        if (performance.now() - (sentAt ?? performance.now()) > 30_000 || rssMb(child.pid) > RSS_CAP_MB) child.kill('SIGKILL');
      }, 100);
      child.on('close', (code, signal) => {
        clearInterval(guard);
        children.delete(child);
        noteInput(performance.now() - t0, peak);
        res({ code, signal, ms: sentAt === null ? null : performance.now() - sentAt });
      });
    });
    const runDir = join(d, 'one');
    const what = `SIGINT${times > 1 ? ` x${times}` : ''} during ${phase} of a 4-iteration run (evaluation every 2)`;
    if (exit.signal === 'SIGKILL') {
      count(t, 'crash', phase, { what, expect: 'exit within 30 s of the signal', got: 'still running 30 s after SIGINT (hang)' });
      continue;
    }
    // A process that ended by its own exit releases its lock; one ended by a signal cannot, and --resume (below) must
    // take the dead holder's lock over.
    if (exit.code !== null && existsSync(join(runDir, '.lock'))) {
      count(t, 'silent', phase, { what, expect: 'the lock released', got: `exit ${exit.code}; .lock left` });
      continue;
    }
    // Ended by the signal itself (before the handler is in place, or a second SIGINT), or by the handler: exit 130 or
    // E_INTERRUPTED.
    const interrupted = exit.signal === 'SIGINT' || (exit.code !== 0 && (/E_INTERRUPTED|interrupt/i.test(err) || exit.code === 130));
    if (exit.code !== 0 && !interrupted) {
      count(t, 'crash', phase, { what, expect: 'E_INTERRUPTED or exit 130', got: `exit ${exit.code ?? exit.signal}: ${short(err.slice(-300))}` });
      continue;
    }
    // Resume to the end: every iteration once, an evaluation at iterations 2 and 4.
    const resumed =
      sentAt === null || exit.code === 0
        ? { code: 0, err: '' }
        : await spawnWatched([process.execPath, bin, 'train', '--config', cfg, '--resume', '--quiet'], { timeoutMs: 180_000 });
    const its = iterationsOf(runDir);
    const evals = eventsOf(runDir, 'eval');
    if (resumed.code !== 0 && !existsSync(join(runDir, 'checkpoints', 'latest')) && /E_|nothing to resume|no checkpoint/i.test(resumed.err)) {
      // Interrupted before the first checkpoint: nothing to resume is a coded answer.
      count(t, 'coded', phase);
    } else if (resumed.code !== 0) {
      count(t, 'crash', phase, { what, expect: 'lamer train --resume finishes the run', got: `exit ${resumed.code}: ${short(resumed.err.slice(-300))}` });
    } else if (its?.join(',') !== '1,2,3,4') {
      count(t, 'silent', phase, { what, expect: 'iterations 1,2,3,4 once each after --resume', got: short(its?.join(',') ?? 'none') });
    } else if (!evals?.includes(2) || !evals?.includes(4)) {
      count(t, 'silent', phase, { what, expect: 'evaluations at iterations 2 and 4 after --resume', got: `evaluations at ${JSON.stringify(evals)}` });
    } else count(t, interrupted ? 'coded' : 'correct', phase);
    t.notes.push(`${what}: exit ${exit.code ?? exit.signal}${exit.ms === null ? '' : `, ${Math.round(exit.ms)} ms after the signal`}`);
  }
  return t;
}

/** A uniform in [0, 1) of the seed and an index (the start-up signal's delay). */
function r0(seed, i) {
  return rng(seed * 131 + i)();
}

// ------------------------------------------------------------------------------------------------------------------

const started = performance.now();
const rows = [];
try {
  const needBase = only.some((c) => ['checkpoints', 'cli', 'paths'].includes(c));
  const base = needBase ? await makeBase() : undefined;
  const plan = [
    ['checkpoints', 'corrupted checkpoints', () => probeCheckpoints(base)],
    ['cli', 'bad configs and CLI calls', () => probeCli(base)],
    ['tensor', 'tensor-API abuses', () => probeTensor()],
    ['env', 'adversarial agent responses', () => probeEnv()],
    ['paths', 'path tricks', () => probePaths()],
    ['adapters', 'LoRA adapters and lamer merge', () => probeAdapters()],
    ['optimizer', 'optimizer and ZeRO shard files', () => probeOptimizer()],
    ['runstate', 'trainer state and checkpoints/latest on --resume', () => probeRunState()],
    ['data', 'WebShop data files and ALFWorld game folders', () => probeData()],
    ['concurrency', 'two processes on a run folder or its parent', () => probeConcurrency()],
    ['signals', 'SIGINT at each phase, then --resume', () => probeSignals()],
  ];
  for (const [key, label, fn] of plan) {
    if (!only.includes(key)) continue;
    const t0 = performance.now();
    process.stderr.write(`probe: ${label}...`);
    usage.maxMs = 0;
    usage.peakMb = 0;
    const t = await fn();
    const s = (performance.now() - t0) / 1000;
    process.stderr.write(` ${t.tried} in ${s.toFixed(0)} s\n`);
    rows.push({ label, t, s, maxMs: usage.maxMs, peakMb: usage.peakMb });
  }
} finally {
  cleanup();
}

console.log(
  `lamer hardening probe${QUICK ? ' (--quick: about 10% of the samples)' : ''}, seed ${SEED}, ${((performance.now() - started) / 1000).toFixed(0)} s\n`,
);
console.log(
  '| category | tried | coded error | correct result | crash (signal / uncoded exception / hang past a timeout) | silent (accepted garbage) | slowest input (s) | largest child (MB resident) | run time (s) |',
);
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
const sum = { tried: 0, coded: 0, correct: 0, crash: 0, silent: 0 };
const fmt = (ms) => (ms / 1000).toFixed(1);
for (const { label, t, s, maxMs, peakMb } of rows) {
  console.log(`| ${label} | ${t.tried} | ${t.coded} | ${t.correct} | ${t.crash} | ${t.silent} | ${fmt(maxMs)} | ${Math.round(peakMb)} | ${s.toFixed(0)} |`);
  for (const k of Object.keys(sum)) sum[k] += t[k];
}
if (rows.length > 1) {
  const most = (k) => Math.max(...rows.map((r) => r[k]));
  const total = rows.reduce((a, r) => a + r.s, 0);
  console.log(
    `| **all** | ${sum.tried} | ${sum.coded} | ${sum.correct} | ${sum.crash} | ${sum.silent} | ${fmt(most('maxMs'))} | ${Math.round(most('peakMb'))} | ${total.toFixed(0)} |`,
  );
}
console.log(
  "\nCoded: a LamerError code (CLI: `[E_...]`, or a usage error with exit 2, or the command's own refusal). " +
    'Checkpoint cases are copies of `lamer init-model --preset tiny --seed 3 --out DIR` with one mutation each, loaded ' +
    'in a child with Policy.load(DIR) and then used (encode, logprobs, renderChat, decode). Agent responses: ' +
    `step() or, every tenth call, parseReflection(); a call over ${SLOW_MS} ms (best of 3) counts as a crash. ` +
    `Children are killed past ${RSS_CAP_MB} MB resident or their time limit. Slowest input: a worker's case from its ` +
    'start to its result (an agent-response case is 100 calls), or a whole command (a CLI call, a merge, a resume, a pair ' +
    'of runs on one folder, a run signalled and resumed).',
);
const findings = rows.flatMap(({ label, t }) => t.findings.map((f) => ({ label, ...f })));
if (findings.length) {
  console.log(`\n${findings.length} crash/silent case${findings.length === 1 ? '' : 's'}:\n`);
  for (const f of findings) {
    console.log(`- [${f.cls}] ${f.label}: ${f.what}\n  expected ${f.expect}; got ${f.got}${f.detail ? `\n  stderr: ${f.detail}` : ''}`);
  }
}
if (VERBOSE) {
  for (const { label, t } of rows) {
    console.log(
      `\n${label}, by kind: ${[...t.kinds].map(([k, v]) => `${k} ${v.coded}/${v.correct}/${v.crash}/${v.silent}`).join('; ')} (coded/correct/crash/silent)`,
    );
    for (const n of t.notes) console.log(`  note: ${n}`);
  }
}
process.exitCode = findings.length ? 1 : 0;
