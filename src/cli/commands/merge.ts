// `lamer merge`: a LoRA adapter folded into its base, written as a plain Hugging Face checkpoint.
import { existsSync, realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { parseCommandArgs } from '../args.js';
import type { Command } from '../command.js';
import { Policy } from '../../model/policy.js';
import type { CheckpointDType } from '../../model/config.js';

const usage = `usage: lamer merge --model BASE --adapter DIR --out OUT [--dtype float32|bfloat16|float16]

Loads the base checkpoint BASE on the CPU in float32, applies the peft LoRA adapter in DIR (adapter_config.json +
adapter_model.safetensors, as lamer's LoRA checkpoints and peft write them), folds it into the weights
(W + scale B A, computed in float64) and writes OUT: config.json, model.safetensors (or shards), the tokenizer files.
transformers loads OUT without peft.
  --model    the base checkpoint folder the adapter was trained on
  --adapter  the adapter folder (a LoRA run's checkpoint, or peft's save_pretrained output)
  --out      folder to write (created if missing)
  --dtype    storage dtype of the merged weights (default: the base's, from its config.json)`;

/** The real path `p` has or will have: links resolved in its longest existing prefix, the rest appended. */
function realPath(p: string): string {
  let head = resolve(p);
  const rest: string[] = [];
  while (!existsSync(head) && dirname(head) !== head) {
    rest.unshift(basename(head));
    head = dirname(head);
  }
  return join(existsSync(head) ? realpathSync(head) : head, ...rest);
}

export const command: Command = {
  name: 'merge',
  summary: 'fold a LoRA adapter into its base and write a Hugging Face checkpoint',
  usage,
  async run(argv: string[]): Promise<number> {
    const values = parseCommandArgs('merge', usage, argv, {
      model: { type: 'string' },
      adapter: { type: 'string' },
      out: { type: 'string' },
      dtype: { type: 'string' },
    });
    if (!values) return 2;
    if (!values.model || !values.adapter || !values.out) {
      console.error(`lamer merge: --model, --adapter and --out are required\n\n${usage}`);
      return 2;
    }
    const dtype = values.dtype as CheckpointDType | undefined;
    if (dtype !== undefined && dtype !== 'float32' && dtype !== 'bfloat16' && dtype !== 'float16') {
      console.error(`lamer merge: --dtype must be float32, bfloat16 or float16\n\n${usage}`);
      return 2;
    }
    // By real path: an --out that is a symbolic link to the base (or reaches it through a linked parent) would
    // overwrite the base's own files.
    const out = realPath(values.out);
    if (out === realPath(values.model) || out === realPath(values.adapter)) {
      console.error(`lamer merge: --out must be a folder of its own, not the base or the adapter (${values.out} is ${out})`);
      return 2;
    }
    await using policy = await Policy.load(values.model, { device: 'cpu', dtype: 'float32', paramDtype: 'float32' });
    await policy.loadAdapter(values.adapter);
    const lora = policy.lora!;
    await policy.mergeAdapter();
    await policy.save(values.out, dtype ? { dtype } : {});
    console.log(
      `wrote ${values.out}: ${values.model} with the adapter of ${values.adapter} merged (r ${lora.r}, alpha ${lora.alpha}, ${lora.modules.length} projections)`,
    );
    return 0;
  },
};
