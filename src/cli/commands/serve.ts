// `lamer serve`: a checkpoint, an adapter over its base, or a run's latest checkpoint behind an OpenAI-compatible
// endpoint (src/serve/server.ts) until Ctrl-C.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseCommandArgs } from '../args.js';
import type { Command } from '../command.js';
import { Policy, adapterBaseModel, isAdapterDir, isCheckpointDir } from '../../model/policy.js';
import { latestCheckpoint } from '../../train/checkpoint.js';
import { serve } from '../../serve/server.js';
import { LamerError } from '../../errors.js';
import type { DeviceName } from '../../tensor.js';

const usage = `usage: lamer serve --model DIR [--adapter DIR] [--host 127.0.0.1] [--port 8000] [--api-key KEY] [--name NAME]
                   [--slots 64] [--device cpu|cuda]

Serves the model with OpenAI's API at http://HOST:PORT/v1 (GET /v1/models, POST /v1/chat/completions and
/v1/completions, streaming included) until Ctrl-C. Beyond OpenAI's fields: top_k, return_token_ids (the prompt's and
each choice's token ids) and enable_thinking. Requests share the engine's batch.
  --model    a checkpoint folder, a LoRA adapter folder (over the base it names), or a run folder (its latest
             checkpoint, over the run's model for a LoRA run)
  --adapter  a LoRA adapter to load over --model
  --host     the address to listen on (default 127.0.0.1: this machine only)
  --port     default 8000 (0: any free port)
  --api-key  require Authorization: Bearer KEY (also enables POST /v1/lamer/reload {"path": DIR}, which swaps in
             another checkpoint or adapter of the same base between requests)
  --name     the model name clients send (default: lamer)
  --slots    sequences the engine decodes together (default 64)
  --device   cpu or cuda (default cpu)`;

/** The checkpoint a --model path names: itself, or a run folder's latest checkpoint. */
function resolveModel(path: string): string {
  // A run folder holds a config.json too (the run's), so its checkpoints are looked for first.
  if (existsSync(join(path, 'checkpoints'))) {
    const latest = latestCheckpoint(join(path, 'checkpoints'));
    if (latest) return latest;
    throw new LamerError('E_ARG', `${path} is a run folder without a finished checkpoint yet`);
  }
  const runs = existsSync(path) ? readdirSync(path).filter((n) => existsSync(join(path, n, 'checkpoints'))) : [];
  if (runs.length > 0) {
    throw new LamerError('E_ARG', `${path} is a comparison job: serve one of its method runs (${runs.map((n) => join(path, n)).join(', ')})`);
  }
  if (isCheckpointDir(path) || isAdapterDir(path)) return path;
  throw new LamerError('E_ARG', `${path} is neither a checkpoint, an adapter, nor a run folder with checkpoints`);
}

export const command: Command = {
  name: 'serve',
  summary: 'serve a checkpoint or a run with an OpenAI-compatible HTTP API',
  usage,
  async run(argv: string[]): Promise<number> {
    const values = parseCommandArgs('serve', usage, argv, {
      model: { type: 'string' },
      adapter: { type: 'string' },
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string', default: '8000' },
      'api-key': { type: 'string' },
      name: { type: 'string', default: 'lamer' },
      slots: { type: 'string', default: '64' },
      device: { type: 'string', default: 'cpu' },
    });
    if (!values) return 2;
    const port = Number(values.port);
    const slots = Number(values.slots);
    const problems: string[] = [];
    if (!values.model) problems.push('--model DIR is required');
    if (!Number.isInteger(port) || port < 0 || port > 65535) problems.push(`--port must be an integer in [0, 65535], found '${values.port}'`);
    if (!Number.isInteger(slots) || slots < 1) problems.push(`--slots must be an integer >= 1, found '${values.slots}'`);
    if (values.device !== 'cpu' && !values.device.startsWith('cuda')) problems.push(`--device must be cpu or cuda[:N], found '${values.device}'`);
    if (problems.length > 0) {
      console.error(`lamer serve: ${problems.join('; ')}\n\n${usage}`);
      return 2;
    }
    const device = values.device as DeviceName;
    const model = resolveModel(values.model!);
    // The base an adapter goes over: the one it names, else --model's own base when --model is a full checkpoint.
    let base: string | null = null;
    const open = async (path: string): Promise<Policy> => {
      if (!isAdapterDir(path)) return Policy.load(path, { device });
      const over = adapterBaseModel(path) ?? base;
      if (!over) throw new LamerError('E_ARG', `${path} is an adapter that names no base model; serve its base with --model BASE --adapter ${path}`);
      const p = await Policy.load(over, { device });
      await p.loadAdapter(path);
      return p;
    };
    let policy: Policy;
    if (values.adapter) {
      base = model;
      policy = await Policy.load(model, { device });
      await policy.loadAdapter(values.adapter);
    } else {
      policy = await open(model);
      if (!isAdapterDir(model)) base = model;
    }
    const server = await serve(policy, {
      host: values.host,
      port,
      slots,
      modelName: values.name,
      ...(values['api-key'] ? { apiKey: values['api-key'] } : {}),
      reload: open,
      log: (line) => console.error(line),
    });
    console.log(`serving ${model}${values.adapter ? ` + ${values.adapter}` : ''} as '${values.name}' at ${server.url}/v1 (Ctrl-C stops)`);
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    await server.close();
    policy.dispose();
    return 0;
  },
};
