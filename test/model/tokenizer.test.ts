// Tokenizers and chat templates without a reference to compare with: the real Qwen3 tokenizer's special ids, the
// project's compact tokenizer's vocabulary, where a chat template is read from, and the refusal of a catastrophic
// pre-tokenizer pattern. test/parity/model/tokenizer.test.ts compares both tokenizers and the chat template with
// transformers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ChatTemplate } from '../../src/model/chat.js';
import { TextTokenizer } from '../../src/model/tokenizer.js';
import { buildCompactTokenizer } from '../../src/model/compact-tokenizer.js';
import { qwen3TokenizerFiles, QWEN3_IDS } from '../../src/model/presets.js';
import { removeTempDirs, tempDir } from '../helpers/index.js';

afterAll(removeTempDirs);

describe('real Qwen3 tokenizer', () => {
  let dir: string;
  let tokenizer: TextTokenizer;
  beforeAll(async () => {
    const files = await qwen3TokenizerFiles();
    dir = tempDir('qwen3tok');
    writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(files.tokenizer));
    writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify(files.config));
    tokenizer = TextTokenizer.load(dir)!;
  });

  it('special ids are the ones SPEC §9 lists', () => {
    expect(tokenizer.tokenToId('<|endoftext|>')).toBe(QWEN3_IDS.endoftext);
    expect(tokenizer.tokenToId('<|im_start|>')).toBe(QWEN3_IDS.imStart);
    expect(tokenizer.tokenToId('<|im_end|>')).toBe(QWEN3_IDS.imEnd);
    expect(tokenizer.tokenToId('<think>')).toBe(QWEN3_IDS.think);
    expect(tokenizer.tokenToId('</think>')).toBe(QWEN3_IDS.endThink);
  });
});

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
