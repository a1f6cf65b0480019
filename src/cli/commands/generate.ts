// `lamer generate`: a completion from a checkpoint, printed as it is decoded — a quick look at what a model does.
import { parseCommandArgs } from '../args.js';
import type { Command } from '../command.js';
import { Policy } from '../../model/policy.js';
import { Engine } from '../../engine/engine.js';
import type { DeviceName } from '../../tensor.js';

const usage = `usage: lamer generate --model DIR --prompt TEXT [--chat] [--max-new N] [--temperature T] [--top-p P]
                      [--top-k K] [--seed S] [--stop TEXT]... [--device cpu|cuda] [--thinking]

Prints the completion of TEXT as it is generated, then why it ended (stop or length) on stderr.
  --chat         wrap TEXT as a user message in the checkpoint's chat template (with the generation prompt)
  --thinking     with --chat: leave thinking enabled in the template (default: disabled, as in Qwen3's
                 enable_thinking=false)
  --max-new      new tokens at most (default 256)
  --temperature  0 is greedy (default 0.7)
  --top-p        nucleus cut in (0, 1] (default 1)
  --top-k        keep the K most likely tokens; 0 keeps all (default 0)
  --seed         sampling seed (default 0), so a run can be repeated
  --stop         a stop string (repeatable); the model's end-of-turn ids always stop`;

export const command: Command = {
  name: 'generate',
  summary: 'print a completion of a prompt from a checkpoint (streamed)',
  usage,
  async run(argv: string[]): Promise<number> {
    const values = parseCommandArgs('generate', usage, argv, {
      model: { type: 'string' },
      prompt: { type: 'string' },
      chat: { type: 'boolean', default: false },
      thinking: { type: 'boolean', default: false },
      'max-new': { type: 'string', default: '256' },
      temperature: { type: 'string', default: '0.7' },
      'top-p': { type: 'string', default: '1' },
      'top-k': { type: 'string', default: '0' },
      seed: { type: 'string', default: '0' },
      stop: { type: 'string', multiple: true, default: [] },
      device: { type: 'string', default: 'cpu' },
    });
    if (!values) return 2;
    const maxNew = Number(values['max-new']);
    const temperature = Number(values.temperature);
    const topP = Number(values['top-p']);
    const topK = Number(values['top-k']);
    const seed = Number(values.seed);
    const problems: string[] = [];
    if (!values.model) problems.push('--model DIR is required');
    if (values.prompt === undefined) problems.push('--prompt TEXT is required');
    if (!Number.isInteger(maxNew) || maxNew < 1) problems.push(`--max-new must be an integer >= 1, found '${values['max-new']}'`);
    if (!(temperature >= 0)) problems.push(`--temperature must be a number >= 0, found '${values.temperature}'`);
    if (!(topP > 0 && topP <= 1)) problems.push(`--top-p must be in (0, 1], found '${values['top-p']}'`);
    if (!Number.isSafeInteger(topK) || topK < 0) problems.push(`--top-k must be an integer >= 0 (0 keeps all), found '${values['top-k']}'`);
    if (!Number.isSafeInteger(seed) || seed < 0) problems.push(`--seed must be an integer in [0, 2^53), found '${values.seed}'`);
    if (problems.length > 0) {
      console.error(`lamer generate: ${problems.join('; ')}\n\n${usage}`);
      return 2;
    }

    await using policy = await Policy.load(values.model!, { device: values.device as DeviceName });
    if (!policy.tokenizer) {
      console.error(`lamer generate: ${values.model} has no tokenizer.json, so a text prompt cannot be encoded`);
      return 1;
    }
    if (values.chat && !policy.chatTemplate) {
      console.error(`lamer generate: --chat: ${values.model} has no chat template (tokenizer_config.json or chat_template.jinja)`);
      return 1;
    }
    const text = values.chat
      ? policy.renderChat([{ role: 'user', content: values.prompt! }], { addGenerationPrompt: true, enableThinking: values.thinking })
      : values.prompt!;
    const promptIds = policy.encode(text);
    if (promptIds.length === 0) {
      console.error('lamer generate: the prompt encodes to no tokens');
      return 2;
    }

    await using engine = new Engine(policy, { slots: 1 });
    const tokens: number[] = [];
    let printed = '';
    const flush = (final: boolean): void => {
      const now = policy.decode(tokens, { skipSpecialTokens: true });
      // A token can end inside a multi-byte character: wait for the rest before printing it.
      const stable = final ? now : now.replace(/\uFFFD+$/, '');
      if (stable.startsWith(printed) && stable.length > printed.length) {
        process.stdout.write(stable.slice(printed.length));
        printed = stable;
      }
    };
    const t0 = performance.now();
    const result = await engine.generate({
      promptIds,
      maxNewTokens: maxNew,
      temperature,
      topP,
      topK,
      seed,
      stop: values.stop as string[],
      onTokens: (t) => {
        tokens.push(...t);
        flush(false);
      },
    });
    tokens.length = result.tokens.length;
    flush(true);
    const seconds = (performance.now() - t0) / 1000;
    const why = result.stoppedBy
      ? 'tokenId' in result.stoppedBy
        ? `stop id ${result.stoppedBy.tokenId}`
        : `stop string ${JSON.stringify(result.stoppedBy.string)}`
      : `${maxNew} tokens`;
    process.stdout.write('\n');
    console.error(`[${result.finishReason}: ${why}; ${promptIds.length} prompt + ${result.tokens.length} new tokens in ${seconds.toFixed(2)} s]`);
    return 0;
  },
};
