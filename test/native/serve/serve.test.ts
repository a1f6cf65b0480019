// `lamer serve` through the official `openai` npm client against a served tiny Qwen3-template checkpoint: chat
// completions with and without streaming, log-probs against the trainer's forward, n > 1 with seeds, stop strings,
// return_token_ids against the tokenizer, a tool call round trip (a checkpoint trained to call a tool), greedy output
// equal to `lamer generate`, 32 concurrent streams sharing the engine's steps with one client leaving mid-stream, and
// hostile input answered with the right status while the server keeps serving.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { connect } from 'node:net';
import { join } from 'node:path';
import OpenAI from 'openai';
import { Policy } from '../../../src/model/policy.js';
import { presetCheckpoint } from '../../../src/model/presets.js';
import { Optimizer } from '../../../src/train/optimizer.js';
import { serve, type LamerServer } from '../../../src/serve/server.js';
import { root, tempDir } from '../../helpers/index.js';

const KEY = 'test-key';
const TOOLS = [
  {
    type: 'function' as const,
    function: {
      name: 'get_weather',
      description: 'the weather in a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
];
const CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';
const ASK = [{ role: 'user' as const, content: 'What is the weather in Paris?' }];

let dir: string;
let policy: Policy;
let server: LamerServer;
let client: OpenAI;
// Extensions beyond OpenAI's fields ride in the body as any other field.
type Extra = Record<string, unknown>;

beforeAll(async () => {
  dir = tempDir('serve');
  const preset = await presetCheckpoint('tiny', 'qwen3');
  const init = await Policy.init(preset.config, { seed: 5, assets: preset.assets });
  // A checkpoint that calls the tool: trained (supervised) to answer the weather question with a tool call.
  const prompt = init.encodeChat(ASK, { enableThinking: false, tools: TOOLS });
  const response = [...init.encode(CALL), init.stopIds[0]];
  using opt = Optimizer.create(init, { lr: 1e-2 });
  for (let s = 0; s < 120; s++) await opt.sftStep([{ prompt, response }]);
  await init.save(join(dir, 'model'));
  init.dispose();
  // Another checkpoint of the same base shape, for the hot swap.
  const other = await Policy.init(preset.config, { seed: 6, assets: preset.assets });
  await other.save(join(dir, 'other'));
  other.dispose();
  policy = await Policy.load(join(dir, 'model'));
  server = await serve(policy, { port: 0, apiKey: KEY, slots: 32, maxQueued: 40, requestTimeoutMs: 1500, reload: (path) => Policy.load(path) });
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: KEY, maxRetries: 0 });
}, 240_000);

afterAll(async () => {
  await server?.close();
  policy?.dispose();
});

const greedy = { model: 'lamer', temperature: 0, max_tokens: 12, enable_thinking: false } as const;

describe('lamer serve with the openai client', () => {
  it("lists the model; greedy chat equals `lamer generate`, streamed or not; token ids are the tokenizer's", async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['lamer']);
    const messages = [{ role: 'user' as const, content: 'Name a colour.' }];
    const r = await client.chat.completions.create({ ...greedy, messages, return_token_ids: true } as Extra as never);
    const text = (r as OpenAI.ChatCompletion).choices[0].message.content!;
    const cli = execFileSync(
      process.execPath,
      [
        join(root, 'bin', 'lamer.js'),
        'generate',
        '--model',
        join(dir, 'model'),
        '--prompt',
        'Name a colour.',
        '--chat',
        '--temperature',
        '0',
        '--max-new',
        '12',
      ],
      {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    expect(text).toBe(cli.replace(/\n$/, ''));
    const extra = r as unknown as { prompt_token_ids: number[]; choices: Array<{ token_ids: number[] }> };
    expect(extra.prompt_token_ids).toEqual(policy.encodeChat(messages, { enableThinking: false }));
    expect(policy.decode(extra.choices[0].token_ids, { skipSpecialTokens: true })).toBe(text);
    expect(r.usage).toMatchObject({ prompt_tokens: extra.prompt_token_ids.length, completion_tokens: extra.choices[0].token_ids.length });

    const stream = await client.chat.completions.create({ ...greedy, messages, stream: true, stream_options: { include_usage: true } } as Extra as never);
    let streamed = '';
    let finish: string | null = null;
    let usage: unknown;
    for await (const chunk of stream as unknown as AsyncIterable<OpenAI.ChatCompletionChunk>) {
      for (const c of chunk.choices) {
        streamed += c.delta.content ?? '';
        finish = c.finish_reason ?? finish;
      }
      if (chunk.usage) usage = chunk.usage;
    }
    expect(streamed).toBe(text);
    expect(finish).toBe(r.choices[0].finish_reason);
    expect(usage).toEqual(r.usage);
  });

  it("log-probs are the trainer's forward's, top log-probs ranked; n > 1 with a seed repeats; stop strings cut", async () => {
    const messages = [{ role: 'user' as const, content: 'Count to five.' }];
    const r = await client.chat.completions.create({ ...greedy, messages, logprobs: true, top_logprobs: 3, return_token_ids: true } as Extra as never);
    const c = (r as OpenAI.ChatCompletion).choices[0];
    const ids = (r as unknown as { choices: Array<{ token_ids: number[] }> }).choices[0].token_ids;
    const [reference] = await policy.logprobs({ prompts: [(r as unknown as { prompt_token_ids: number[] }).prompt_token_ids], completions: [ids] });
    const content = c.logprobs!.content!;
    expect(content).toHaveLength(ids.length);
    content.forEach((t, i) => {
      expect(Math.abs(t.logprob - reference[i])).toBeLessThan(1e-4);
      expect(t.top_logprobs).toHaveLength(3);
      // Greedy: the token taken is the most likely one.
      expect(t.top_logprobs[0].token).toBe(t.token);
      expect(t.top_logprobs[0].logprob).toBeGreaterThanOrEqual(t.top_logprobs[1].logprob);
    });

    const sampled = { model: 'lamer', messages, temperature: 1, max_tokens: 10, n: 3, seed: 7 };
    const a = await client.chat.completions.create(sampled);
    const b = await client.chat.completions.create(sampled);
    expect(a.choices.map((x) => x.message.content)).toEqual(b.choices.map((x) => x.message.content));
    expect(a.choices.map((x) => x.index)).toEqual([0, 1, 2]);
    expect(new Set(a.choices.map((x) => x.message.content)).size).toBeGreaterThan(1);

    const full = (await client.chat.completions.create({ ...greedy, messages } as Extra as never)) as OpenAI.ChatCompletion;
    const text = full.choices[0].message.content!;
    const stop = text.slice(Math.floor(text.length / 2), Math.floor(text.length / 2) + 2);
    const cut = (await client.chat.completions.create({ ...greedy, messages, stop: [stop] } as Extra as never)) as OpenAI.ChatCompletion;
    expect(cut.choices[0].finish_reason).toBe('stop');
    // The text ends before the stop string, as OpenAI's API has it, streamed or not.
    expect(cut.choices[0].message.content).toBe(text.slice(0, text.indexOf(stop)));
    const streamedCut = await client.chat.completions.create({ ...greedy, messages, stop: [stop], stream: true } as Extra as never);
    let sc = '';
    for await (const chunk of streamedCut as unknown as AsyncIterable<OpenAI.ChatCompletionChunk>) sc += chunk.choices[0]?.delta.content ?? '';
    expect(sc).toBe(cut.choices[0].message.content);
    // /v1/completions streams token by token too, and ends the same way.
    const prompt = policy.encodeChat(messages, { enableThinking: false });
    const plain = await client.completions.create({ model: 'lamer', prompt, temperature: 0, max_tokens: 12, stop: [stop] });
    expect(plain.choices[0].text).toBe(cut.choices[0].message.content);
    const chunks: string[] = [];
    for await (const chunk of await client.completions.create({ model: 'lamer', prompt, temperature: 0, max_tokens: 12, stream: true }))
      chunks.push(chunk.choices[0].text);
    expect(chunks.join('')).toBe(text);
    expect(chunks.filter((x) => x.length > 0).length).toBeGreaterThan(1);
  });

  it('a tool call round trip: the model calls the tool, the client answers it, the template renders both', async () => {
    const r = (await client.chat.completions.create({ ...greedy, max_tokens: 40, messages: ASK, tools: TOOLS } as Extra as never)) as OpenAI.ChatCompletion;
    const choice = r.choices[0];
    expect(choice.finish_reason).toBe('tool_calls');
    const call = choice.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
    const followUp = [...ASK, choice.message, { role: 'tool' as const, tool_call_id: call.id, content: 'sunny, 21 C' }];
    const r2 = await client.chat.completions.create({ ...greedy, messages: followUp, tools: TOOLS, return_token_ids: true } as Extra as never);
    const expected = policy.encodeChat(
      [
        ...ASK,
        { role: 'assistant', content: '', tool_calls: [{ id: call.id, type: 'function', function: { name: 'get_weather', arguments: { city: 'Paris' } } }] },
        { role: 'tool', content: 'sunny, 21 C', tool_call_id: call.id },
      ],
      { enableThinking: false, tools: TOOLS },
    );
    expect((r2 as unknown as { prompt_token_ids: number[] }).prompt_token_ids).toEqual(expected);
    expect(policy.decode(expected)).toContain('<tool_response>\nsunny, 21 C\n</tool_response>');
  });

  it('32 concurrent streams share the engine steps; a client leaving mid-stream frees its sequence', async () => {
    const before = server.engine.stats();
    const abortedBefore = server.stats().abortedSequences;
    const ac = new AbortController();
    const run = async (i: number) => {
      const stream = await client.chat.completions.create(
        { model: 'lamer', messages: [{ role: 'user', content: `Story ${i}` }], temperature: 1, seed: i, max_tokens: 48, stream: true },
        i === 0 ? { signal: ac.signal } : {},
      );
      let chunks = 0;
      for await (const _ of stream) {
        chunks++;
        if (i === 0 && chunks === 3) {
          ac.abort(); // the client goes away mid-stream
          break;
        }
      }
      return chunks;
    };
    const results = await Promise.all(Array.from({ length: 32 }, (_, i) => run(i)));
    expect(results[0]).toBe(3);
    // The others streamed every token (a role chunk, 48 content chunks at most, the finish).
    expect(results.slice(1).every((n) => n > 10)).toBe(true);
    const after = server.engine.stats();
    // Interleaved: the 32 sequences were decoded together, far fewer steps than their tokens.
    expect(after.peakActive).toBeGreaterThanOrEqual(16);
    expect(after.tokens - before.tokens).toBeGreaterThan(2 * (after.decodeSteps - before.decodeSteps));
    // The one that left was aborted in the engine, not decoded to its end; nothing is live once the others finished.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(server.stats().abortedSequences).toBe(abortedBefore + 1);
    expect(server.stats().sequences).toBe(0);
    expect(server.engine.active).toBe(0);
  }, 120_000);

  it('POST /v1/lamer/reload swaps in another checkpoint between requests (key required), a bad path refused', async () => {
    const messages = [{ role: 'user' as const, content: 'Name a colour.' }];
    const ask = async () =>
      ((await client.chat.completions.create({ ...greedy, messages } as Extra as never)) as OpenAI.ChatCompletion).choices[0].message.content;
    const generate = (model: string) =>
      execFileSync(
        process.execPath,
        [join(root, 'bin', 'lamer.js'), 'generate', '--model', model, '--prompt', 'Name a colour.', '--chat', '--temperature', '0', '--max-new', '12'],
        {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'ignore'],
        },
      ).replace(/\n$/, '');
    const reload = (path: string, key = KEY) =>
      fetch(`${server.url}/v1/lamer/reload`, {
        method: 'POST',
        body: JSON.stringify({ path }),
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      });
    expect((await reload(join(dir, 'other'), 'wrong')).status).toBe(401);
    const during = ask(); // in flight while the swap is asked for: finishes on the old weights
    while (server.stats().inFlight === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    const swapped = await reload(join(dir, 'other'));
    expect(swapped.status).toBe(200);
    expect(await during).toBe(generate(join(dir, 'model')));
    expect(await ask()).toBe(generate(join(dir, 'other')));
    const bad = await reload(join(dir, 'nothing'));
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { param: string } }).error.param).toBe('path');
    expect((await reload(join(dir, 'model'))).status).toBe(200);
    expect(await ask()).toBe(generate(join(dir, 'model')));
  }, 60_000);

  it('hostile input gets the right status, and the server keeps serving', async () => {
    const post = (path: string, body: string | Buffer, headers: Record<string, string> = {}) =>
      fetch(`${server.url}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, ...headers } });
    const ok = { model: 'lamer', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 };
    const cases: Array<[string, Promise<Response>, number, string | null]> = [
      ['malformed JSON', post('/v1/chat/completions', '{"model": "lamer", "messages": ['), 400, null],
      ['wrong type', post('/v1/chat/completions', JSON.stringify({ ...ok, temperature: 'hot' })), 400, 'temperature'],
      ['missing field', post('/v1/chat/completions', JSON.stringify({ model: 'lamer' })), 400, 'messages'],
      ['unknown field', post('/v1/chat/completions', JSON.stringify({ ...ok, logit_bias: {} })), 400, 'logit_bias'],
      ['huge body', post('/v1/chat/completions', Buffer.alloc(5 * 2 ** 20, 'a')), 413, null],
      ['huge max_tokens', post('/v1/chat/completions', JSON.stringify({ ...ok, max_tokens: 10 ** 9 })), 400, 'max_tokens'],
      ['huge prompt', post('/v1/completions', JSON.stringify({ model: 'lamer', prompt: 'word '.repeat(20_000), max_tokens: 1 })), 413, 'messages'],
      ['unknown model', post('/v1/chat/completions', JSON.stringify({ ...ok, model: 'gpt-4' })), 404, 'model'],
      ['missing key', post('/v1/chat/completions', JSON.stringify(ok), { authorization: '' }), 401, null],
      ['token outside the vocabulary', post('/v1/completions', JSON.stringify({ model: 'lamer', prompt: [1, 10 ** 7], max_tokens: 1 })), 400, 'prompt'],
    ];
    for (const [what, response, status, param] of cases) {
      const r = await response;
      expect(r.status, what).toBe(status);
      const body = (await r.json()) as { error: { message: string; type: string; param: string | null; code: string | null } };
      expect(typeof body.error.message, what).toBe('string');
      if (param) expect(body.error.param, what).toBe(param);
    }
    // Past the queue (40 sequences here): 429 with Retry-After, the others served (long answers keep the first two in
    // flight while the third arrives).
    const many = await Promise.all(
      [0, 1, 2].map(() =>
        post('/v1/chat/completions', JSON.stringify({ model: 'lamer', messages: [{ role: 'user', content: 'hi' }], max_tokens: 200, n: 16 })),
      ),
    );
    const refused = many.filter((r) => r.status === 429);
    expect(refused).toHaveLength(1);
    expect(refused[0].headers.get('retry-after')).toBe('1');
    expect(((await refused[0].json()) as { error: { code: string } }).error.code).toBe('rate_limit_exceeded');
    expect(many.filter((r) => r.status === 200)).toHaveLength(2);
    // A slow client (headers that never finish) is cut off after the request timeout; others are served meanwhile.
    const slow = connect(server.port, '127.0.0.1');
    const closed = new Promise<number>((resolve) => {
      const t0 = Date.now();
      slow.on('close', () => resolve(Date.now() - t0));
    });
    let answer = '';
    slow.on('data', (d: Buffer) => (answer += d.toString()));
    slow.write('POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n');
    const during = await client.chat.completions.create({ model: 'lamer', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });
    expect(during.choices).toHaveLength(1);
    expect(await closed).toBeLessThan(10_000);
    expect(answer).toMatch(/^HTTP\/1.1 408/);
    // Nothing left live, and the server still answers.
    expect(server.engine.active).toBe(0);
    expect((await client.models.list()).data).toHaveLength(1);
  }, 60_000);
});
