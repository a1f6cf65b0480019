// `lamer score`: log-probs of token sequences under a checkpoint, one JSON line in, one out.
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { parseCommandArgs } from '../args.js';
import type { Command } from '../command.js';
import { Policy } from '../../model/policy.js';
import type { DeviceName } from '../../tensor.js';
import { LamerError } from '../../errors.js';

const usage = `usage: lamer score --model DIR --input IN.jsonl --out OUT.jsonl [--device cpu|cuda] [--batch N]

Each input line {"ids": [...]} gives an output line {"logprobs": [...]} with
logprobs[i] = log p(ids[i+1] | ids[0..i]) at temperature 1 (one value fewer than ids).
  --batch  lines scored per forward batch (default 32)`;

export const command: Command = {
  name: 'score',
  summary: 'log-probs of token-id sequences under a checkpoint (JSONL in, JSONL out)',
  usage,
  async run(argv: string[]): Promise<number> {
    const values = parseCommandArgs('score', usage, argv, {
      model: { type: 'string' },
      input: { type: 'string' },
      out: { type: 'string' },
      device: { type: 'string', default: 'cpu' },
      batch: { type: 'string', default: '32' },
    });
    if (!values) return 2;
    const batchSize = Number(values.batch);
    if (!values.model || !values.input || !values.out || !Number.isInteger(batchSize) || batchSize < 1) {
      console.error(`lamer score: --model, --input and --out are required\n\n${usage}`);
      return 2;
    }
    // The input must be a readable regular file: a missing one is E_IO, a named pipe is not waited on.
    const input = statSync(values.input, { throwIfNoEntry: false });
    if (!input?.isFile()) throw new LamerError('E_IO', `lamer score: --input ${values.input}: ${input ? 'not a regular file' : 'no such file'}`);
    await using policy = await Policy.load(values.model, { device: values.device as DeviceName });
    const out = createWriteStream(values.out);
    try {
      await once(out, 'open');
    } catch (e) {
      console.error(`lamer score: cannot write ${values.out}: ${(e as Error).message}`);
      return 1;
    }
    const lines = createInterface({ input: createReadStream(values.input), crlfDelay: Infinity });
    let pending: number[][] = [];
    let lineNo = 0;
    let scored = 0;
    const flush = async (): Promise<void> => {
      if (pending.length === 0) return;
      const results = await policy.logprobs(pending);
      scored += results.length;
      for (const r of results) {
        if (!out.write(`${JSON.stringify({ logprobs: Array.from(r) })}\n`)) await once(out, 'drain');
      }
      pending = [];
    };
    try {
      for await (const line of lines) {
        lineNo++;
        if (line.trim() === '') continue;
        let ids: unknown;
        try {
          ids = (JSON.parse(line) as { ids?: unknown }).ids;
        } catch (e) {
          console.error(`lamer score: ${values.input}:${lineNo}: not valid JSON: ${(e as Error).message}`);
          return 1;
        }
        if (!Array.isArray(ids) || ids.length === 0 || !ids.every((x) => Number.isInteger(x) && x >= 0 && x < policy.config.vocabSize)) {
          console.error(`lamer score: ${values.input}:${lineNo}: expected {"ids": [...]} with at least one token id in [0, ${policy.config.vocabSize})`);
          return 1;
        }
        pending.push(ids as number[]);
        if (pending.length >= batchSize) await flush();
      }
      await flush();
    } finally {
      lines.close();
      out.end();
      await once(out, 'finish');
    }
    console.error(`lamer score: wrote ${scored} line${scored === 1 ? '' : 's'} of log-probs to ${values.out}`);
    return 0;
  },
};
