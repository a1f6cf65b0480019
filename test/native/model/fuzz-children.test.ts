// 320 corrupted checkpoints loaded in child processes: corrupted safetensors headers and data, truncated files,
// config.json fields replaced by absurd values, broken shard indexes. Every outcome must be a correct load (finite
// log-probs) or a coded error; no child may die by a signal or grow past a memory cap.
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Policy } from '../../../src/model/policy.js';
import { tinyConfig } from '../train/step-helpers.js';
import { rng, root } from '../../helpers/index.js';

const CASES = 320;
const CHILDREN = 4;
const RSS_CAP_MB = 1500;

const ABSURD: unknown[] = [0, -1, 1e9, 1e300, 2 ** 53, 1.5, 'x', null, [], {}, true, 1e-300, -1e300];
const FIELDS = [
  'vocab_size',
  'hidden_size',
  'intermediate_size',
  'num_hidden_layers',
  'num_attention_heads',
  'num_key_value_heads',
  'head_dim',
  'rms_norm_eps',
  'rope_theta',
  'eos_token_id',
  'bos_token_id',
  'tie_word_embeddings',
  'max_position_embeddings',
  'model_type',
];

/** The cases: a folder each, corrupted one way. */
function corrupt(base: string, out: string): string[] {
  const r = rng(2024);
  const pick = (n: number) => Math.floor(r() * n);
  const weights = readFileSync(join(base, 'model.safetensors'));
  const config = JSON.parse(readFileSync(join(base, 'config.json'), 'utf8')) as Record<string, unknown>;
  const headerEnd = 8 + Number(weights.readBigUInt64LE(0));
  const dirs: string[] = [];
  for (let k = 0; k < CASES; k++) {
    const dir = join(out, `case-${k}`);
    cpSync(base, dir, { recursive: true });
    const kind = k % 5;
    if (kind === 0) {
      const buf = Buffer.from(weights);
      for (let i = 0; i < 1 + pick(3); i++) buf[pick(headerEnd)] = pick(256); // header bytes, length field included
      writeFileSync(join(dir, 'model.safetensors'), buf);
    } else if (kind === 1) {
      const buf = Buffer.from(weights);
      for (let i = 0; i < 1 + pick(8); i++) buf[headerEnd + pick(buf.length - headerEnd)] = pick(256);
      writeFileSync(join(dir, 'model.safetensors'), buf);
    } else if (kind === 2) {
      writeFileSync(join(dir, 'model.safetensors'), weights.subarray(0, pick(weights.length)));
    } else if (kind === 3) {
      const field = FIELDS[pick(FIELDS.length)];
      writeFileSync(join(dir, 'config.json'), JSON.stringify({ ...config, [field]: ABSURD[pick(ABSURD.length)] }));
    } else {
      const variants = [
        '{',
        '{"weight_map": {}}',
        JSON.stringify({ weight_map: { 'model.embed_tokens.weight': '../outside.safetensors' } }),
        JSON.stringify({ weight_map: { 'model.embed_tokens.weight': 'missing.safetensors' } }),
        JSON.stringify({ weight_map: { 'model.embed_tokens.weight': 'model.safetensors' } }),
        JSON.stringify({ weight_map: [] }),
      ];
      writeFileSync(join(dir, 'model.safetensors.index.json'), variants[pick(variants.length)]);
    }
    dirs.push(dir);
  }
  return dirs;
}

function runChild(script: string, dirs: string[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; lines: string[]; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...dirs], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 240_000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, lines: out.split('\n').filter(Boolean), err });
    });
  });
}

describe('corrupted checkpoints in child processes', () => {
  it(`${CASES} corruptions: a correct load or a coded error each, no signal, no child above ${RSS_CAP_MB} MB`, async () => {
    const work = mkdtempSync(join(tmpdir(), 'lamer-fuzz-children-'));
    const base = join(work, 'base');
    {
      await using policy = await Policy.init(tinyConfig({ vocab: 40, layers: 2 }), { seed: 3, std: 0.2 });
      await policy.save(base);
    }
    writeFileSync(join(work, 'outside.safetensors'), 'root:x:0:0:root:/root:/bin/bash\n');
    mkdirSync(join(work, 'cases'));
    const dirs = corrupt(base, join(work, 'cases'));
    const script = join(work, 'load.mts');
    writeFileSync(
      script,
      `import { Policy } from ${JSON.stringify(join(root, 'src', 'model', 'policy.ts'))};
       for (const dir of process.argv.slice(2)) {
         let outcome: string;
         // (No 'await using' here: its lowering inside a loop can rethrow an earlier iteration's error.)
         let p: Policy | undefined;
         try {
           p = await Policy.load(dir);
           const lp = await p.logprobs([[1, 5, 3]]);
           outcome = lp[0].length === 2 ? 'loaded' : 'wrong-length';
         } catch (e) {
           const code = (e as { code?: unknown }).code;
           outcome = typeof code === 'string' && /^E_[A-Z_]+$/.test(code) ? code : 'UNCODED ' + String((e as Error).message).slice(0, 120);
         } finally {
           p?.dispose();
         }
         console.log(JSON.stringify({ dir, outcome }));
       }
       console.log(JSON.stringify({ maxRssMb: process.resourceUsage().maxRSS / 1024 }));`,
    );
    const share = Math.ceil(dirs.length / CHILDREN);
    const results = await Promise.all(Array.from({ length: CHILDREN }, (_, c) => runChild(script, dirs.slice(c * share, (c + 1) * share))));
    const outcomes = new Map<string, number>();
    for (const r of results) {
      expect(r.signal, r.err.slice(-2000)).toBeNull();
      expect(r.code, r.err.slice(-2000)).toBe(0);
      const last = JSON.parse(r.lines.at(-1)!) as { maxRssMb: number };
      expect(last.maxRssMb).toBeLessThan(RSS_CAP_MB);
      for (const line of r.lines.slice(0, -1)) {
        const { outcome } = JSON.parse(line) as { outcome: string };
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      }
    }
    expect([...outcomes.values()].reduce((a, b) => a + b, 0)).toBe(CASES);
    const uncoded = [...outcomes.keys()].filter((k) => k.startsWith('UNCODED') || k === 'wrong-length');
    expect(uncoded).toEqual([]);
    // Both kinds of outcome occur: corruptions that leave a valid checkpoint load, the others are refused.
    expect(outcomes.get('loaded') ?? 0, JSON.stringify([...outcomes])).toBeGreaterThan(20);
    expect(outcomes.get('E_CHECKPOINT') ?? 0).toBeGreaterThan(100);
  }, 300_000);
});
