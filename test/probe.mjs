#!/usr/bin/env node
// Hardening probe: feeds lamer hostile inputs and counts how each one ends. Five categories: corrupted checkpoints
// (loaded in child processes), bad configs and command lines (the `lamer` CLI), abuses of the Tensor API,
// adversarial agent responses to every environment, and path tricks in run names and model paths. Each input ends as
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
//   --only     comma-separated categories: checkpoints,cli,tensor,env,paths (default: all)
//   --jobs     children run at once (default 2)
//   --seed     seed of the random mutations and responses (default 1)
//   --verbose  also list the cases that were refused although harmless and every case's outcome counts by kind
//   --keep     keep the temporary folder (its path is printed) instead of removing it
// Exit status 1 when any case is a crash or silent, else 0. Nothing is written outside one mkdtemp folder, which is
// removed at the end.
import { spawn, execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
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

if (process.argv[2] === '--worker') {
  const { register } = await import('tsx/esm/api');
  register();
  const [, , , kind, file, from] = process.argv;
  const cases = JSON.parse(readFileSync(file, 'utf8'));
  const run = { checkpoint: workCheckpoint, tensor: workTensor, env: workEnv }[kind];
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
const known = new Set(['--quick', '--only', '--jobs', '--seed', '--verbose', '--keep']);
for (let i = 0; i < args.length; i++) {
  if (!known.has(args[i])) {
    console.error(
      `probe: unknown argument '${args[i]}'\nusage: npm run probe -- [--quick] [--only checkpoints,cli,tensor,env,paths] [--jobs N] [--seed N] [--verbose] [--keep]`,
    );
    process.exit(2);
  }
  if (['--only', '--jobs', '--seed'].includes(args[i])) i++;
}
const QUICK = flag('--quick');
const VERBOSE = flag('--verbose');
const JOBS = Math.max(1, Number(option('--jobs', '2')) || 2);
const SEED = Number(option('--seed', '1')) || 1;
const CATEGORIES = ['checkpoints', 'cli', 'tensor', 'env', 'paths'];
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
        const r = await spawnWatched([process.execPath, '--max-old-space-size=2048', self, '--worker', kind, file, String(from)], {
          timeoutMs: 90_000, // start-up (tsx, the addon); each case gets caseTimeoutMs from its S line
          onLine: (line) => {
            if (line.startsWith('S ')) {
              began = true;
              current = Number(line.slice(2));
              return caseTimeoutMs;
            }
            if (line.startsWith('R ')) {
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

async function probeEnv() {
  const t = tally();
  const envs = ['minesweeper', 'sokoban', 'webshop', 'alfworld'];
  const total = scale(10_000);
  const stepsPerEpisode = 100; // calls per case (the worker starts a new episode whenever one ends)
  const cases = [];
  const per = Math.ceil(total / envs.length);
  for (const env of envs) {
    for (let done = 0, seed = 1; done < per; seed++) {
      const steps = Math.min(stepsPerEpisode, per - done);
      cases.push({ env, seed: seed + SEED * 100_000, steps });
      done += steps;
    }
  }
  const results = await runWorkers('env', cases, { caseTimeoutMs: 20_000 });
  results.forEach((res, i) => {
    const c = cases[i];
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
  ];
  for (const [key, label, fn] of plan) {
    if (!only.includes(key)) continue;
    const t0 = performance.now();
    process.stderr.write(`probe: ${label}...`);
    const t = await fn();
    const s = (performance.now() - t0) / 1000;
    process.stderr.write(` ${t.tried} in ${s.toFixed(0)} s\n`);
    rows.push({ label, t, s });
  }
} finally {
  cleanup();
}

console.log(
  `lamer hardening probe${QUICK ? ' (--quick: about 10% of the samples)' : ''}, seed ${SEED}, ${((performance.now() - started) / 1000).toFixed(0)} s\n`,
);
console.log('| category | tried | coded error | correct result | crash (signal / uncoded exception / hang past a timeout) | silent (accepted garbage) |');
console.log('|---|---:|---:|---:|---:|---:|');
const sum = { tried: 0, coded: 0, correct: 0, crash: 0, silent: 0 };
for (const { label, t } of rows) {
  console.log(`| ${label} | ${t.tried} | ${t.coded} | ${t.correct} | ${t.crash} | ${t.silent} |`);
  for (const k of Object.keys(sum)) sum[k] += t[k];
}
if (rows.length > 1) console.log(`| **all** | ${sum.tried} | ${sum.coded} | ${sum.correct} | ${sum.crash} | ${sum.silent} |`);
console.log(
  "\nCoded: a LamerError code (CLI: `[E_...]`, or a usage error with exit 2, or the command's own refusal). " +
    'Checkpoint cases are copies of `lamer init-model --preset tiny --seed 3 --out DIR` with one mutation each, loaded ' +
    'in a child with Policy.load(DIR) and then used (encode, logprobs, renderChat, decode). Agent responses: ' +
    `step() or, every tenth call, parseReflection(); a call over ${SLOW_MS} ms (best of 3) counts as a crash. ` +
    `Children are killed past ${RSS_CAP_MB} MB resident or their time limit.`,
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
