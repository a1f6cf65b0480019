// Tokenizers and chat templates without a reference to compare with: the real Qwen3 tokenizer's special ids, the
// project's compact tokenizer's vocabulary, where a chat template is read from, and the refusal of a catastrophic
// pre-tokenizer pattern. test/parity/model/tokenizer.test.ts compares both tokenizers and the chat template with
// transformers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ChatTemplate } from '../../src/model/chat.js';
import { TextTokenizer } from '../../src/model/tokenizer.js';
import {
  ALFWORLD_MAX_NUMBER,
  ALFWORLD_TYPES,
  buildCompactTokenizer,
  compactTokenizerWith,
  type CompactTokenizerName,
} from '../../src/model/compact-tokenizer.js';
import { householdTypes as generatedAlfWorldTypes } from '../../src/envs/alfworld/games/world.js';
import { webShopCompactVocabulary } from '../../src/envs/webshop/vocabulary.js';
import { generateCatalogFiles } from '../../src/envs/webshop/data/catalog.js';
import { createWebShopEnv } from '../../src/envs/webshop/index.js';
import { WebShopBrowser } from '../../src/envs/webshop/browser.js';
import { taskSeed } from '../../src/envs/common/seeds.js';
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

describe('per-environment compact tokenizers', () => {
  const load = (name: CompactTokenizerName): TextTokenizer => {
    const files = buildCompactTokenizer(name);
    const dir = tempDir(name);
    writeFileSync(join(dir, 'tokenizer.json'), files['tokenizer.json']);
    writeFileSync(join(dir, 'tokenizer_config.json'), files['tokenizer_config.json']);
    return TextTokenizer.load(dir)!;
  };

  it('leaves the base compact tokenizer byte for byte as the default job measured it', () => {
    // The default MineSweeper job's confirmed headline was measured with these exact files (sha256 of each).
    const files = buildCompactTokenizer();
    const hash = (text: string): string => createHash('sha256').update(text).digest('hex');
    expect(hash(files['tokenizer.json'])).toBe('7031946ae13f3318117c987d0bc04601ca6aa93cd3fdc38c27d8978eaa76c2f7');
    expect(hash(files['tokenizer_config.json'])).toBe('96b2955c03c3c97a1aaa052bb1049935141e9b879d298e415225c38723e9f020');
    expect(files.vocabSize).toBe(631);
    expect(buildCompactTokenizer('compact')['tokenizer.json']).toBe(files['tokenizer.json']);
  });

  it('a vocabulary no config names builds the same way: none is the base, pieces become single tokens', () => {
    const base = buildCompactTokenizer('compact');
    expect(compactTokenizerWith(null)['tokenizer.json']).toBe(base['tokenizer.json']);
    // What bench/train.bench.ts counts: a MineSweeper board with one token a cell and a row separator.
    const files = compactTokenizerWith({ pieces: ['?', '.', '1', '2', '/'].flatMap((s) => [` ${s}`, s]) });
    const cells = new TextTokenizer(JSON.parse(files['tokenizer.json']), JSON.parse(files['tokenizer_config.json']));
    const plain = new TextTokenizer(JSON.parse(base['tokenizer.json']), JSON.parse(base['tokenizer_config.json']));
    const board = '? 1 . . . / ? 1 . . . / ? 2 1 . . / ? ? 2 1 . / ? ? ? 1 .';
    expect(cells.encode(board)).toHaveLength(25 + 4);
    expect(plain.encode(board)).toHaveLength(2 * (25 + 4) - 1);
    expect(cells.decode(cells.encode(`mine T1 | now: ${board} | act:`))).toBe(`mine T1 | now: ${board} | act:`);
    expect(files.vocabSize).toBe(base.vocabSize + 5);
  });

  it('compact-sokoban: every cell of a board, every move and the prompt fields are one token each', () => {
    const base = load('compact');
    const sok = load('compact-sokoban');
    const board = '# # # # # # / # S X _ _ # / # # O _ √ # / # # P X _ # / # # # # # #';
    // 30 cells and 4 row separators.
    expect(sok.encode(board)).toHaveLength(30 + 4);
    expect(base.encode(board).length).toBeGreaterThan(60);
    expect(sok.encode('√√ upup')).toHaveLength(4);
    for (const text of ['<action>up</action>', '<action>down</action>', 'left, right', ' | act:', ' ; P (3, 4) X (3, 5)']) {
      expect(sok.decode(sok.encode(text))).toBe(text);
    }
    expect(sok.encode('<action>left</action>')).toHaveLength(3);
    expect(sok.encode('up, down, left, right')).toHaveLength(7);
    // The base's single tokens stay single: the answer tags and the cells.
    expect(sok.encode('(4, 2)')).toHaveLength(1);
    expect(sok.encode('<remark>')).toHaveLength(1);
    expect(sok.tokenToId('<action>')).toBeDefined();
    // Any text still round-trips (byte-level).
    const odd = 'naïve café 日本語 🙂 upup downtown #__# √√';
    expect(sok.decode(sok.encode(odd))).toBe(odd);
  });

  it('compact-alfworld: every name of a generated household with its number is one token, never inside a longer one', () => {
    const alf = load('compact-alfworld');
    const base = load('compact');
    // Every type the generator uses has its names; the list cannot drift from the generator's.
    expect([...ALFWORLD_TYPES].sort()).toEqual(generatedAlfWorldTypes());
    for (const type of ALFWORLD_TYPES) {
      for (let k = 1; k <= ALFWORLD_MAX_NUMBER; k++) expect(alf.encode(` ${type} ${k}`)).toHaveLength(1);
    }
    const command = '<action>take apple 2 from countertop 1</action>';
    expect(alf.encode(command)).toHaveLength(6);
    expect(base.encode(command).length).toBeGreaterThan(12);
    // ` desk 1` is not found inside ` desklamp 1`, nor ` apple 1` inside ` apple 12` (which stays lossless).
    const desk = alf.encode(' desk 1')[0];
    expect(alf.encode('go to desklamp 1')).not.toContain(desk);
    expect(alf.encode('go to desklamp 1')).toContain(alf.encode(' desklamp 1')[0]);
    for (const text of ['take apple 12 from desk 1', 'cabinet 1cabinet 1', 'alf put a hot mug in cabinet. T1 | act:']) {
      expect(alf.decode(alf.encode(text))).toBe(text);
    }
    // The base's single tokens stay single.
    expect(alf.encode('(4, 2)')).toHaveLength(1);
    expect(alf.encode('<remark>')).toHaveLength(1);
  });

  it('compact-webshop: every word of the catalog and the pages, with or without its space, and every product id one token', () => {
    const shop = load('compact-webshop');
    const base = load('compact');
    // The WebShop CPU job's confirmation was measured with these exact files.
    const files0 = buildCompactTokenizer('compact-webshop');
    const hash = (text: string): string => createHash('sha256').update(text).digest('hex');
    expect(hash(files0['tokenizer.json'])).toBe('9bf37106c38ef88b14c3651d45350ebfc258581c449b423e8f8c4b46d4828c8c');
    expect(hash(files0['tokenizer_config.json'])).toBe('ad9f07d8457e9e573e6632a08caac2c638039735dbbf9a0a7cd6befa8aa4917b');
    expect(files0.vocabSize).toBe(3745);
    const vocabulary = webShopCompactVocabulary();
    // Bare words (right after `[` or `<action>`) are ranked so that none splits another; the verbs and every option
    // value among them.
    expect(vocabulary.bare).toEqual(expect.arrayContaining(['search', 'click', 'navy', 'hazelnut', 'black', 'lavender', 'find']));
    for (const piece of [...vocabulary.pieces, ...(vocabulary.bare ?? [])]) expect(shop.encode(piece), piece).toHaveLength(1);
    const files = generateCatalogFiles(1000, 0);
    for (const p of files.products) expect(shop.encode(` ${String(p.asin).toLowerCase()}`)).toHaveLength(2);
    const option = (value: string): number => shop.encode(`<action>click[${value}]</action>`).length;
    expect(option('navy blue')).toBe(7);
    expect(option('hazelnut')).toBe(6);
    expect(shop.encode("<action>search[i'm looking for a ground coffee that is dairy free and kosher]</action>")).toHaveLength(18);
    // The prompts of a scripted trial: under half the base tokenizer's length, and lossless.
    const env = createWebShopEnv({ maxTurns: 12 });
    const initial = env.reset(taskSeed('train', 0));
    const player = new WebShopBrowser(env, { style: 'compact' });
    const steps: { action: string; observation: string }[] = [];
    for (let t = 0; t < 3; t++) {
      const prompt = env.playPrompt({ style: 'compact', initial, memory: ['T1 fail note: wrong: b0gvmbzl5r.'], episode: 1, steps });
      expect(shop.decode(shop.encode(prompt))).toBe(prompt);
      expect(shop.encode(prompt).length * 2).toBeLessThan(base.encode(prompt).length);
      const r = env.step(player.act());
      steps.push({ action: r.historyAction ?? '', observation: r.observation.text });
    }
    // Other catalogs' ids and any other text still encode, byte by byte.
    for (const text of ['click[B0GVMBZL5R] b0zzzzzzzz', 'naïve café 日本語 🙂 Wrencrest Deluxe']) expect(shop.decode(shop.encode(text))).toBe(text);
    expect(shop.encode('(4, 2)')).toHaveLength(1);
    expect(shop.encode('<remark>')).toHaveLength(1);
  });

  it('refuses an unknown compact tokenizer name with E_CONFIG naming the choices', () => {
    expect(() => buildCompactTokenizer('compact-chess' as never)).toThrow(
      expect.objectContaining({ code: 'E_CONFIG', message: expect.stringContaining('compact, compact-sokoban, compact-alfworld, compact-webshop') }),
    );
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
