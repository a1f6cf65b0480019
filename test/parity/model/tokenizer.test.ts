// Tokenizers and chat templates against transformers: the real Qwen3 tokenizer and its chat template give the same
// ids as apply_chat_template with enable_thinking true, false and unset; the project's compact tokenizer encodes
// like transformers' PreTrainedTokenizerFast.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ChatTemplate, type ChatMessage } from '../../../src/model/chat.js';
import { TextTokenizer } from '../../../src/model/tokenizer.js';
import { buildCompactTokenizer } from '../../../src/model/compact-tokenizer.js';
// The compact-webshop vocabulary is handed to the model layer by the WebShop module.
import '../../../src/envs/webshop/index.js';
import { qwen3TokenizerFiles } from '../../../src/model/presets.js';
import { parityPython, Oracle } from '../python.js';
import { removeTempDirs, tempDir } from '../../helpers/index.js';

afterAll(removeTempDirs);

const py = parityPython();

const CONVERSATIONS: ChatMessage[][] = [
  [{ role: 'user', content: 'Hello!' }],
  [
    { role: 'system', content: 'You are an expert agent playing Sokoban.' },
    { role: 'user', content: 'Board:\n#####\n#@$.#\n#####\nGive the action inside <action> and </action>.' },
  ],
  [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Open a safe cell on the 4x4 board.' },
    { role: 'assistant', content: '<think>\nThe corner is safe.\n</think>\n\n<action>(1, 1)</action>' },
    { role: 'user', content: 'On trial #1 the task was NOT completed. <remark>avoid (2, 3)</remark> Écoute, 日本語 🙂' },
  ],
];

let oracle: Oracle;

describe.skipIf(!py.ok)(`tokenizers against transformers${py.ok ? '' : ` (skipped: ${py.reason})`}`, () => {
  beforeAll(() => {
    oracle = new Oracle();
  });
  afterAll(() => oracle?.close());

  describe('real Qwen3 tokenizer and chat template', () => {
    let dir: string;
    let tokenizer: TextTokenizer;
    let template: ChatTemplate;
    beforeAll(async () => {
      const files = await qwen3TokenizerFiles();
      dir = tempDir('qwen3tok');
      writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(files.tokenizer));
      writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify(files.config));
      tokenizer = TextTokenizer.load(dir)!;
      template = ChatTemplate.load(dir)!;
    });

    for (const enableThinking of [undefined, true, false]) {
      it(`apply_chat_template ids match with enable_thinking ${String(enableThinking)}`, async () => {
        for (const messages of CONVERSATIONS) {
          const kwargs: Record<string, unknown> = { add_generation_prompt: true };
          if (enableThinking !== undefined) kwargs.enable_thinking = enableThinking;
          const ref = await oracle.request<{ ids: number[]; text: string }>({ op: 'chat', tokenizer: dir, messages, kwargs });
          const text = template.render(messages, { addGenerationPrompt: true, enableThinking });
          expect(text).toBe(ref.text);
          expect(tokenizer.encode(text)).toEqual(ref.ids);
          if (enableThinking === false) expect(text.endsWith('<think>\n\n</think>\n\n')).toBe(true);
        }
      });
    }

    it('plain text encodes like transformers and decodes back', async () => {
      const texts = [
        'Hello world',
        '  leading spaces\tand\ttabs\n\nnewlines',
        'numbers 12345 and 3.14159',
        '<action>(2, 3)</action>',
        'naïve café 日本語 🙂',
        "it's don't I'll",
      ];
      const ref = await oracle.request<{ ids: number[][] }>({ op: 'encode', tokenizer: dir, texts });
      texts.forEach((t, i) => {
        expect(tokenizer.encode(t)).toEqual(ref.ids[i]);
        expect(tokenizer.decode(ref.ids[i])).toBe(t);
      });
    });
  });

  describe.each(['compact', 'compact-sokoban', 'compact-alfworld', 'compact-webshop'] as const)('compact project tokenizer %s', (name) => {
    let dir: string;
    let tokenizer: TextTokenizer;
    beforeAll(() => {
      const files = buildCompactTokenizer(name);
      dir = tempDir('compacttok');
      writeFileSync(join(dir, 'tokenizer.json'), files['tokenizer.json']);
      writeFileSync(join(dir, 'tokenizer_config.json'), files['tokenizer_config.json']);
      tokenizer = TextTokenizer.load(dir)!;
    });

    it('encodes and decodes like transformers, chat template included', async () => {
      const texts = [
        'You are on trial #2. Open the cell (2, 3).',
        'Board: ? ? 1 / . 1 ? / ? ? ?\n<action>(3, 1)</action>',
        '<remark>The mine was at (2, 2); cells (1, 1) and (1, 3) were safe.</remark>',
        'search[red shoes under $40] click[Buy Now] go to fridge 1',
        'UPPER lower MiXeD 0123456789 !@#$%^&*()_+-=[]{}|;:\'",.<>/?`~',
        'naïve café 日本語 🙂\r\n\ttab',
        'sok T2 | mem: T1 fail note: stuck: move 2 down box (4, 3). plan: up, left | now: # # # / # S X / # √ O ; P (2, 2) X (2, 3) | act:',
        '<action>up, down</action><remark>out of turns: 0/1 placed.</remark> upup downtown #__# √√',
        // ALFWorld names as added tokens: leftmost-longest, never inside a longer name or number.
        'alf put a clean soapbar in garbagecan 1. T2 | mem: T1 fail note: apple 1 at cabinet 2. searched: drawer 1. | now: You open the cabinet 1. In it, you see a apple 1, and a desklamp 1. / can: go to desk 1, take apple 12 from cabinet 12 | act:',
        '<action>move pen 1 to desk 1</action> pencil 1 desklamp 1 cabinet 7 cabinet 1cabinet 1  cabinet 1,apple 6',
        // WebShop: catalog words with and without a space, product ids as added tokens, other ids spelled out.
        "shop i'm looking for a ground coffee that is dairy free with flavor: original, and size: 24 ounce T2 | mem: T1 fail note: wrong: b0gvmbzl5r. | acts: search[i'm looking for a ground coffee] ; click[b0gvmbzl5r] | now: back to search / < prev / flavor / french vanilla / size / 12 ounce / price: $32.31 to $37.31 | act:",
        '<action>click[navy blue]</action><action>search[find me a hoodie]</action> B0GVMBZL5R b0gvmbzl5rb0jbey2lsz lavenders',
      ];
      const ref = await oracle.request<{ ids: number[][] }>({ op: 'encode', tokenizer: dir, texts });
      texts.forEach((t, i) => {
        expect(tokenizer.encode(t)).toEqual(ref.ids[i]);
        expect(tokenizer.decode(ref.ids[i])).toBe(t);
      });
      const template = ChatTemplate.load(dir)!;
      for (const enableThinking of [undefined, false]) {
        const kwargs: Record<string, unknown> = { add_generation_prompt: true };
        if (enableThinking !== undefined) kwargs.enable_thinking = enableThinking;
        const chat = await oracle.request<{ ids: number[]; text: string }>({ op: 'chat', tokenizer: dir, messages: CONVERSATIONS[1], kwargs });
        const text = template.render(CONVERSATIONS[1], { enableThinking });
        expect(text).toBe(chat.text);
        expect(tokenizer.encode(text)).toEqual(chat.ids);
      }
    });
  });
});
