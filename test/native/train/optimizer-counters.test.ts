// An optimizer state file's step counter is read whole or refused: `step` written as "1e9" was read as 1 (the schedule
// and AdamW's bias correction restarted without a word), "-3" and "2.5" were taken too. Only a count in plain digits
// loads; anything else is E_CHECKPOINT naming the file and the field.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Optimizer } from '../../../src/train/optimizer.js';
import { sftRows, tinyPolicy } from './step-helpers.js';

/** Rewrites the `__metadata__` of safetensors file `path` (the header length follows; tensor data is unchanged). */
function editMetadata(path: string, edit: (meta: Record<string, string>) => void, out: string): void {
  const buf = readFileSync(path);
  const n = Number(buf.readBigUInt64LE(0));
  const header = JSON.parse(buf.subarray(8, 8 + n).toString('utf8')) as { __metadata__: Record<string, string> };
  edit(header.__metadata__);
  let text = JSON.stringify(header);
  text += ' '.repeat((8 - (Buffer.byteLength(text) % 8)) % 8);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(Buffer.byteLength(text)));
  writeFileSync(out, Buffer.concat([len, Buffer.from(text, 'utf8'), buf.subarray(8 + n)]));
}

describe('optimizer state counters', () => {
  it('a step that is not a count in plain digits is refused; a plain one is read whole', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lamer-opt-counters-'));
    await using policy = await tinyPolicy(3);
    using opt = Optimizer.create(policy, { lr: 1e-3 });
    const rows = sftRows(policy.config.vocabSize);
    await opt.sftStep(rows.slice(0, 2));
    await opt.sftStep(rows.slice(2, 4));
    const saved = join(dir, 'optimizer.safetensors');
    await opt.save(saved);
    const edited = join(dir, 'edited.safetensors');
    for (const bad of ['1e9', '-3', '2.5', '', ' 7', '0x10', '99999999999999999999']) {
      editMetadata(saved, (m) => (m.step = bad), edited);
      using other = Optimizer.create(policy, { lr: 1e-3 });
      const e = await other.load(edited).then(
        () => undefined,
        (x: Error & { code?: string }) => x,
      );
      expect(e, `step ${JSON.stringify(bad)} loaded as ${other.stepCount}`).toBeDefined();
      expect(e!.code, String(e)).toBe('E_CHECKPOINT');
      expect(e!.message).toContain(edited);
      expect(e!.message).toContain("'step'");
    }
    editMetadata(saved, (m) => (m.step = '1000000000'), edited);
    using whole = Optimizer.create(policy, { lr: 1e-3 });
    await whole.load(edited);
    expect(whole.stepCount).toBe(1e9);
    using same = Optimizer.create(policy, { lr: 1e-3 });
    await same.load(saved);
    expect(same.stepCount).toBe(2);
  });
});
