// `lamer serve`: a policy behind an OpenAI-compatible HTTP endpoint, on the engine's continuous batching. Every request
// (every choice of one with n > 1) is one sequence of the engine, so concurrent clients share its decode steps; a
// client that disconnects aborts its sequences. Responses carry what a training harness records: the token ids of
// the prompt and of each choice (`return_token_ids`) and the sampled tokens' log-probs.
//
// HTTP and validation are Fastify's (its JSON-schema validation with Ajv, body limits and timeouts), chosen for its
// maintained schema validation and its error objects, which map one to one onto OpenAI's error format. The
// server-sent events of a stream are written directly: each is one `data: JSON` line and a blank line, which a
// library would only wrap.
import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { Engine, type EngineResult } from '../engine/engine.js';
import { LamerError, hasCode } from '../errors.js';
import type { ChatMessage } from '../model/chat.js';
import type { Policy } from '../model/policy.js';
import { CHAT_SCHEMA, COMPLETION_SCHEMA, type ChatRequest, type CompletionRequest, type ContentPart } from './schemas.js';
import { parseToolCalls, type ToolCall } from './tools.js';

export interface ServeOptions {
  /** Default 127.0.0.1 (loopback only). */
  host?: string;
  /** Default 8000; 0 picks a free port. */
  port?: number;
  /** When set, every request needs `Authorization: Bearer KEY`. */
  apiKey?: string;
  /** The model name clients send (`model`) and /v1/models lists. Default "lamer". */
  modelName?: string;
  /** Engine slots (sequences decoded together). Default 64. */
  slots?: number;
  /** Sequences live or waiting at most; past it a request gets 429 with Retry-After. Default 4 x slots. */
  maxQueued?: number;
  /** Request body bytes at most (413 past it). Default 4 MiB. */
  bodyLimit?: number;
  /** Prompt tokens at most (413 past it). Default the model's context less one token. */
  maxPromptTokens?: number;
  /** max_tokens at most (400 past it). Default the model's context. */
  maxTokens?: number;
  /** Milliseconds a client may take to send a whole request (slow clients are cut off: 408). Default 30 s. */
  requestTimeoutMs?: number;
  /**
   * `POST /v1/lamer/reload` opens the checkpoint or adapter it names with this and serves it from the next request
   * on (the CLI passes one that keeps the base); absent, reload answers 404.
   */
  reload?: (path: string) => Promise<Policy>;
  /** Log lines (default none). */
  log?: (line: string) => void;
}

export interface LamerServer {
  /** http://host:port (the OpenAI base URL is this plus /v1). */
  readonly url: string;
  readonly port: number;
  /** The engine serving now (its stats show the requests' interleaved steps). */
  readonly engine: Engine;
  /** Requests answered or failed, requests being served, sequences aborted because their client left, and sequences live or waiting now. */
  stats(): { requests: number; inFlight: number; abortedSequences: number; sequences: number };
  /** Stops accepting connections, aborts the requests in flight and frees the engine. */
  close(): Promise<void>;
}

/** An OpenAI-style error: the status and `{ error: { message, type, param, code } }`. */
class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
    readonly type = status === 401 ? 'authentication_error' : status >= 500 ? 'server_error' : 'invalid_request_error',
  ) {
    super(message);
  }
}

function sendError(reply: FastifyReply, e: ApiError): FastifyReply {
  if (e.status === 429) reply.header('retry-after', '1');
  return reply.status(e.status).send({ error: { message: e.message, type: e.type, param: e.param, code: e.code } });
}

/** A Fastify error (validation, body parsing, limits) in OpenAI's terms. */
function fromFastify(e: FastifyError): ApiError {
  if (e.validation && e.validation.length > 0) {
    const v = e.validation[0];
    const missing = (v.params as { missingProperty?: string; additionalProperty?: string }) ?? {};
    const path = v.instancePath.replace(/^\//, '').replace(/\//g, '.');
    const param = missing.missingProperty ?? missing.additionalProperty ?? (path || null);
    const where = param ? `'${param}'` : 'the body';
    const what = missing.additionalProperty ? 'is not a field this server knows' : missing.missingProperty ? 'is required' : (v.message ?? 'is not valid');
    return new ApiError(400, `${where} ${what}`, param, 'invalid_value');
  }
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return new ApiError(413, `the request body is larger than ${e.message.match(/\d+/)?.[0] ?? 'the limit'} bytes`, null, 'body_too_large');
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new ApiError(415, 'send the body as application/json', null, 'unsupported_media_type');
  if (e.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || e.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || e instanceof SyntaxError) {
    return new ApiError(400, `the body is not valid JSON: ${e.message}`, null, 'invalid_json');
  }
  if (e.statusCode === 408) return new ApiError(408, 'the request took too long to arrive', null, 'request_timeout');
  if (e.statusCode && e.statusCode < 500) return new ApiError(e.statusCode, e.message, null, e.code ?? null);
  return new ApiError(500, 'internal error', null, 'internal_error', 'server_error');
}

const id = (prefix: string) => `${prefix}-${randomBytes(12).toString('hex')}`;

/** The `usage` of a response: the prompt's tokens and every choice's. */
function usageOf(promptIds: readonly number[], choices: readonly Choice[]) {
  const completion = choices.reduce((a, c) => a + c.result.tokens.length, 0);
  return { prompt_tokens: promptIds.length, completion_tokens: completion, total_tokens: promptIds.length + completion };
}

/** Takes the response over as server-sent events; the returned function writes one (nothing once the client left). */
function eventStream(reply: FastifyReply): { send: (data: unknown) => void; end: (last?: string) => void } {
  const raw = reply.raw;
  reply.hijack();
  raw.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const open = () => !raw.writableEnded && !raw.destroyed;
  return {
    send: (data) => {
      if (open()) raw.write(`data: ${JSON.stringify(data)}\n\n`);
    },
    end: (last) => {
      if (open()) raw.end(last);
    },
  };
}
const now = () => Math.floor(Date.now() / 1000);

/** The text of a message's content: a string, or text parts joined (other parts are refused). */
function contentText(content: string | ContentPart[] | null | undefined, at: number): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  return content
    .map((p, j) => {
      if (p.type !== 'text')
        throw new ApiError(400, `messages[${at}].content[${j}]: only text parts are served (found ${p.type})`, `messages.${at}.content`, 'invalid_value');
      return p.text;
    })
    .join('');
}

/** The engine's sampling settings of a request. */
interface Sampling {
  maxNewTokens: number;
  temperature: number;
  topP: number;
  topK: number;
  stop: string[];
  seed?: number;
}

/** What one choice generated. */
interface Choice {
  result: EngineResult;
  /** The text without a stop token. */
  text: string;
}

export async function serve(initial: Policy, options: ServeOptions = {}): Promise<LamerServer> {
  const modelName = options.modelName ?? 'lamer';
  const slots = options.slots ?? 64;
  const maxQueued = options.maxQueued ?? 4 * slots;
  const log = options.log ?? (() => undefined);
  let policy = initial;
  let engine = new Engine(policy, { slots });
  let context = policy.config.maxPositionEmbeddings;
  const limits = () => ({
    prompt: options.maxPromptTokens ?? context - 1,
    tokens: options.maxTokens ?? context,
  });
  /** Sequences live or waiting in the engine, and the requests in flight (a reload waits for them). */
  let sequences = 0;
  let inFlight = 0;
  let requests = 0;
  let abortedSequences = 0;
  let reloading: Promise<void> | null = null;
  const idle: Array<() => void> = [];
  const created = now();

  const requestTimeout = options.requestTimeoutMs ?? 30_000;
  const app: FastifyInstance = Fastify({
    // Node checks the header and request timeouts every connectionsCheckingInterval (30 s by default): often enough
    // here that a slow-loris client is cut off about when its time is up.
    http: { headersTimeout: requestTimeout, connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(requestTimeout / 4))) },
    bodyLimit: options.bodyLimit ?? 4 * 2 ** 20,
    // The time to receive a whole request; not an idle-socket timeout, which would cut a long answer that sends
    // nothing until it is done.
    requestTimeout,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false } },
    logger: false,
  });
  app.setErrorHandler((e: FastifyError, _req, reply) => {
    if (e instanceof ApiError) return sendError(reply, e);
    if (e instanceof LamerError) return sendError(reply, new ApiError(400, e.message, null, e.code));
    const api = fromFastify(e);
    if (api.status >= 500) log(`[serve] ${e.stack ?? e.message}`);
    return sendError(reply, api);
  });
  app.setNotFoundHandler((req, reply) => sendError(reply, new ApiError(404, `no route ${req.method} ${req.url}`, null, 'not_found')));
  app.addHook('onRequest', async (req, reply) => {
    if (!options.apiKey) return;
    const header = req.headers.authorization ?? '';
    if (header !== `Bearer ${options.apiKey}`) {
      return sendError(
        reply,
        new ApiError(401, header ? 'the API key is not valid' : 'an API key is required: send Authorization: Bearer KEY', null, 'invalid_api_key'),
      );
    }
  });

  const checkModel = (model: string) => {
    if (model !== modelName) throw new ApiError(404, `the model '${model}' does not exist; this server serves '${modelName}'`, 'model', 'model_not_found');
  };

  /** Counts a request in flight for its duration (a reload waits until none is). */
  async function tracked<T>(fn: () => Promise<T>): Promise<T> {
    while (reloading) await reloading;
    inFlight++;
    try {
      return await fn();
    } finally {
      requests++;
      inFlight--;
      if (inFlight === 0) for (const wake of idle.splice(0)) wake();
    }
  }

  function sampling(
    body: {
      max_tokens?: number | null;
      max_completion_tokens?: number | null;
      temperature?: number | null;
      top_p?: number | null;
      top_k?: number | null;
      stop?: string | string[] | null;
      seed?: number | null;
    },
    promptTokens: number,
  ): Sampling {
    const lim = limits();
    if (promptTokens > lim.prompt) {
      throw new ApiError(413, `the prompt has ${promptTokens} tokens; this server takes at most ${lim.prompt}`, 'messages', 'context_length_exceeded');
    }
    const requested = body.max_completion_tokens ?? body.max_tokens;
    const param = body.max_completion_tokens != null ? 'max_completion_tokens' : 'max_tokens';
    const room = context - promptTokens;
    if (requested != null && requested > lim.tokens) {
      throw new ApiError(400, `'${param}' is ${requested}; this server generates at most ${lim.tokens} tokens`, param, 'invalid_value');
    }
    if (requested != null && requested > room) {
      throw new ApiError(
        400,
        `'${param}' is ${requested}, but the prompt's ${promptTokens} tokens leave ${room} of the model's ${context}`,
        param,
        'context_length_exceeded',
      );
    }
    return {
      maxNewTokens: Math.max(1, Math.min(requested ?? room, lim.tokens, room)),
      temperature: body.temperature ?? 1,
      topP: body.top_p ?? 1,
      topK: body.top_k ?? 0,
      stop: body.stop == null ? [] : typeof body.stop === 'string' ? [body.stop] : body.stop,
      ...(body.seed != null ? { seed: body.seed } : {}),
    };
  }

  /** Runs `n` sequences of the prompt; aborted when the client goes away. */
  async function generate(
    promptIds: number[],
    s: Sampling,
    n: number,
    signal: AbortSignal,
    onTokens?: (choice: number, tokens: Int32Array, logprobs: Float32Array) => void,
  ): Promise<Choice[]> {
    if (sequences + n > maxQueued) {
      throw new ApiError(429, `the server holds ${sequences} sequences (at most ${maxQueued}); try again shortly`, null, 'rate_limit_exceeded');
    }
    sequences += n;
    const served = engine;
    const servedPolicy = policy;
    try {
      return await Promise.all(
        Array.from({ length: n }, async (_, i) => {
          const result = await served
            .generate({
              promptIds,
              maxNewTokens: s.maxNewTokens,
              temperature: s.temperature,
              topP: s.topP,
              topK: s.topK,
              stop: s.stop,
              ...(s.seed !== undefined ? { seed: s.seed + i } : {}),
              signal,
              ...(onTokens ? { onTokens: (t: Int32Array, l: Float32Array) => onTokens(i, t, l) } : {}),
            })
            .catch((e: unknown) => {
              if (signal.aborted) abortedSequences++;
              throw e;
            });
          const ids = result.stoppedBy && 'tokenId' in result.stoppedBy ? result.tokens.subarray(0, result.tokens.length - 1) : result.tokens;
          let text = servedPolicy.decode(ids, { skipSpecialTokens: true });
          // As OpenAI's API: the text ends before the stop string (the token ids keep what was generated).
          if (result.stoppedBy && 'string' in result.stoppedBy) {
            const at = text.indexOf(result.stoppedBy.string);
            if (at >= 0) text = text.slice(0, at);
          }
          return { result, text };
        }),
      );
    } finally {
      sequences -= n;
    }
  }

  /** An AbortSignal that fires when the client's connection closes before the response is complete. */
  function clientGone(req: FastifyRequest, reply: FastifyReply): AbortController {
    const ac = new AbortController();
    const onClose = () => {
      if (!reply.raw.writableEnded) ac.abort(new ApiError(499, 'the client closed the connection', null, 'client_closed'));
    };
    reply.raw.on('close', onClose);
    req.raw.on('aborted', onClose);
    return ac;
  }

  /** The top log-probs of each generated token (a forward over prompt + completion at the sampling temperature). */
  async function topLogprobs(
    promptIds: number[],
    tokens: ArrayLike<number>,
    k: number,
    temperature: number,
  ): Promise<Array<Array<{ id: number; logprob: number }>>> {
    if (k === 0 || tokens.length === 0) return Array.from({ length: tokens.length }, () => []);
    const logits = await policy.logits([[...promptIds, ...Array.from(tokens)]]);
    try {
      const data = logits.data as Float32Array;
      const vocab = logits.shape[2];
      const t = temperature > 0 ? temperature : 1;
      const out: Array<Array<{ id: number; logprob: number }>> = [];
      for (let i = 0; i < tokens.length; i++) {
        const row = data.subarray((promptIds.length - 1 + i) * vocab, (promptIds.length + i) * vocab);
        let max = -Infinity;
        for (let v = 0; v < vocab; v++) max = Math.max(max, row[v] / t);
        let z = 0;
        for (let v = 0; v < vocab; v++) z += Math.exp(row[v] / t - max);
        const logZ = max + Math.log(z);
        const best: Array<{ id: number; logprob: number }> = [];
        for (let v = 0; v < vocab; v++) {
          const lp = row[v] / t - logZ;
          if (best.length < k || lp > best[best.length - 1].logprob) {
            best.push({ id: v, logprob: lp });
            best.sort((a, b) => b.logprob - a.logprob);
            if (best.length > k) best.pop();
          }
        }
        out.push(best);
      }
      return out;
    } finally {
      logits.dispose();
    }
  }

  /**
   * The text of n streamed choices as deltas. Each push decodes only the newest tokens, with a few before them as
   * context (the text of a token can depend on the one before it, e.g. a leading space), and keeps them back while they
   * end inside a multi-byte character; what it hands on also holds back the characters that could still become a stop
   * string (cut from the final text). finish hands on the rest of the final text.
   */
  function textDeltas(n: number, stop: readonly string[], onDelta: (choice: number, text: string) => void) {
    const longestStop = Math.max(0, ...stop.map((x) => x.length));
    const choices = Array.from({ length: n }, () => ({ tokens: [] as number[], text: '', sent: 0, prefixAt: 0, readAt: 0 }));
    const hand = (i: number, text: string, upto: number) => {
      const c = choices[i];
      if (upto > c.sent) {
        onDelta(i, text.slice(c.sent, upto));
        c.sent = upto;
      }
    };
    const decode = (ids: number[]) => policy.decode(ids, { skipSpecialTokens: true });
    return {
      push(i: number, t: Int32Array) {
        const c = choices[i];
        c.tokens.push(...t);
        const before = decode(c.tokens.slice(c.prefixAt, c.readAt));
        const after = decode(c.tokens.slice(c.prefixAt));
        if (after.length <= before.length || after.endsWith('\ufffd')) return;
        c.text += after.slice(before.length);
        c.prefixAt = c.readAt;
        c.readAt = c.tokens.length;
        let upto = c.text.length - Math.max(0, longestStop - 1);
        // A stop string can only begin in text not yet handed on, or just before it.
        const from = Math.max(0, c.sent - longestStop);
        for (const x of stop) {
          const at = c.text.indexOf(x, from);
          if (at >= 0) upto = Math.min(upto, at);
        }
        hand(i, c.text, upto);
      },
      finish(i: number, text: string) {
        hand(i, text, text.length);
      },
    };
  }

  const tokenText = (tokenId: number) => policy.decode([tokenId], { skipSpecialTokens: false });
  const tokenBytes = (text: string) => Array.from(Buffer.from(text, 'utf8'));

  async function chatLogprobs(promptIds: number[], c: Choice, k: number, temperature: number) {
    const tops = await topLogprobs(promptIds, c.result.tokens, k, temperature);
    return {
      content: Array.from(c.result.tokens, (tokenId, i) => {
        const token = tokenText(tokenId);
        return {
          token,
          logprob: c.result.logprobs[i],
          bytes: tokenBytes(token),
          top_logprobs: tops[i].map((t) => ({ token: tokenText(t.id), logprob: t.logprob, bytes: tokenBytes(tokenText(t.id)) })),
        };
      }),
    };
  }

  const finishReason = (c: Choice, calls: ToolCall[] | null) => (calls ? 'tool_calls' : c.result.finishReason);

  app.get('/v1/models', async () => ({ object: 'list', data: [{ id: modelName, object: 'model', created, owned_by: 'lamer' }] }));

  app.post('/v1/chat/completions', { schema: { body: CHAT_SCHEMA } }, async (req, reply) => {
    const body = req.body as ChatRequest;
    checkModel(body.model);
    return tracked(async () => {
      const messages: ChatMessage[] = body.messages.map((m, i) => ({
        role: m.role,
        content: contentText(m.content, i),
        ...(m.tool_calls
          ? { tool_calls: m.tool_calls.map((t) => ({ ...t, function: { name: t.function.name, arguments: parseArguments(t.function.arguments) } })) }
          : {}),
        ...(m.tool_call_id ? { tool_call_id: m.tool_call_id } : {}),
        ...(m.name ? { name: m.name } : {}),
      }));
      const tools = body.tool_choice === 'none' ? undefined : body.tools;
      if (!policy.chatTemplate) throw new ApiError(400, 'the served checkpoint has no chat template: use /v1/completions', null, 'no_chat_template');
      const text = policy.renderChat(messages, {
        addGenerationPrompt: true,
        ...(body.enable_thinking != null ? { enableThinking: body.enable_thinking } : {}),
        ...(tools ? { tools } : {}),
      });
      const promptIds = policy.encode(text);
      const s = sampling(body, promptIds.length);
      const n = body.n ?? 1;
      const k = body.logprobs ? (body.top_logprobs ?? 0) : 0;
      const ac = clientGone(req, reply);
      const responseId = id('chatcmpl');
      if (body.stream) {
        return streamChat(reply, {
          responseId,
          promptIds,
          s,
          n,
          signal: ac.signal,
          buffer: tools !== undefined,
          includeUsage: body.stream_options?.include_usage === true,
          body,
        });
      }
      const choices = await generate(promptIds, s, n, ac.signal);
      const out = await Promise.all(
        choices.map(async (c, index) => {
          const calls = tools ? parseToolCalls(c.text) : null;
          return {
            index,
            message: { role: 'assistant', content: calls ? calls.content || null : c.text, ...(calls ? { tool_calls: calls.calls } : {}) },
            logprobs: body.logprobs ? await chatLogprobs(promptIds, c, k, s.temperature) : null,
            finish_reason: finishReason(c, calls?.calls ?? null),
            ...(body.return_token_ids ? { token_ids: Array.from(c.result.tokens) } : {}),
          };
        }),
      );
      return {
        id: responseId,
        object: 'chat.completion',
        created: now(),
        model: modelName,
        choices: out,
        usage: usageOf(promptIds, choices),
        ...(body.return_token_ids ? { prompt_token_ids: promptIds } : {}),
      };
    });
  });

  /** A chat completion as server-sent events: a role delta, content deltas as tokens are decoded, the finish, [DONE]. */
  async function streamChat(
    reply: FastifyReply,
    o: { responseId: string; promptIds: number[]; s: Sampling; n: number; signal: AbortSignal; buffer: boolean; includeUsage: boolean; body: ChatRequest },
  ): Promise<FastifyReply> {
    const { responseId, promptIds, s, n, body } = o;
    const base = { id: responseId, object: 'chat.completion.chunk', created: now(), model: modelName };
    const { send, end } = eventStream(reply);
    for (let i = 0; i < n; i++) send({ ...base, choices: [{ index: i, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] });
    // Per choice: the tokens so far and how much of their text was sent. Text that may still turn into a stop string,
    // or ends inside a multi-byte character, waits for the next tokens.
    const text = textDeltas(n, s.stop, (i, content) => send({ ...base, choices: [{ index: i, delta: { content }, logprobs: null, finish_reason: null }] }));
    try {
      const choices = await generate(promptIds, s, n, o.signal, (i, t) => (o.buffer ? undefined : text.push(i, t)));
      for (const [i, c] of choices.entries()) {
        const calls = o.buffer ? parseToolCalls(c.text) : null;
        if (calls) {
          if (calls.content) send({ ...base, choices: [{ index: i, delta: { content: calls.content }, logprobs: null, finish_reason: null }] });
          send({
            ...base,
            choices: [{ index: i, delta: { tool_calls: calls.calls.map((call, j) => ({ index: j, ...call })) }, logprobs: null, finish_reason: null }],
          });
        } else if (!o.buffer) {
          text.finish(i, c.text);
        } else if (c.text) {
          send({ ...base, choices: [{ index: i, delta: { content: c.text }, logprobs: null, finish_reason: null }] });
        }
        const logprobs = body.logprobs ? await chatLogprobs(promptIds, c, body.top_logprobs ?? 0, s.temperature) : null;
        send({
          ...base,
          choices: [
            {
              index: i,
              delta: {},
              logprobs,
              finish_reason: finishReason(c, calls?.calls ?? null),
              ...(body.return_token_ids ? { token_ids: Array.from(c.result.tokens) } : {}),
            },
          ],
          ...(body.return_token_ids ? { prompt_token_ids: promptIds } : {}),
        });
      }
      if (o.includeUsage) send({ ...base, choices: [], usage: usageOf(promptIds, choices) });
      end('data: [DONE]\n\n');
    } catch (e) {
      // The client left (nothing to tell it), or generation failed after the headers went out: an error event.
      if (!o.signal.aborted) {
        const api = e instanceof ApiError ? e : new ApiError(500, (e as Error).message, null, hasCode(e, 'E_ARG') ? 'invalid_value' : 'internal_error');
        send({ error: { message: api.message, type: api.type, param: api.param, code: api.code } });
      }
      end();
    }
    return reply;
  }

  app.post('/v1/completions', { schema: { body: COMPLETION_SCHEMA } }, async (req, reply) => {
    const body = req.body as CompletionRequest;
    checkModel(body.model);
    return tracked(async () => {
      const promptIds = typeof body.prompt === 'string' ? policy.encode(body.prompt) : body.prompt;
      const vocab = policy.config.vocabSize;
      const bad = promptIds.findIndex((t) => t >= vocab);
      if (bad >= 0) throw new ApiError(400, `'prompt' token ${bad} (${promptIds[bad]}) is outside the vocabulary [0, ${vocab})`, 'prompt', 'invalid_value');
      if (promptIds.length === 0) throw new ApiError(400, "'prompt' is empty", 'prompt', 'invalid_value');
      const s = sampling(body, promptIds.length);
      const n = body.n ?? 1;
      const ac = clientGone(req, reply);
      if (body.stream) {
        const { send, end } = eventStream(reply);
        const base = { id: id('cmpl'), object: 'text_completion', created: now(), model: modelName };
        const chunk = (index: number, text: string, finish: string | null) =>
          send({ ...base, choices: [{ index, text, logprobs: null, finish_reason: finish }] });
        const text = textDeltas(n, s.stop, (i, delta) => chunk(i, delta, null));
        try {
          const choices = await generate(promptIds, s, n, ac.signal, (i, t) => text.push(i, t));
          for (const [index, c] of choices.entries()) {
            text.finish(index, c.text);
            chunk(index, '', c.result.finishReason);
          }
          end('data: [DONE]\n\n');
        } catch {
          end();
        }
        return reply;
      }
      const choices = await generate(promptIds, s, n, ac.signal);
      const k = body.logprobs ?? null;
      const out = await Promise.all(
        choices.map(async (c, index) => {
          let logprobs = null;
          if (k !== null) {
            const tops = await topLogprobs(promptIds, c.result.tokens, k, s.temperature);
            const tokens = Array.from(c.result.tokens, tokenText);
            const offsets: number[] = [];
            let at = 0;
            for (const t of tokens) {
              offsets.push(at);
              at += t.length;
            }
            logprobs = {
              tokens,
              token_logprobs: Array.from(c.result.logprobs),
              top_logprobs: tops.map((row) => Object.fromEntries(row.map((t) => [tokenText(t.id), t.logprob]))),
              text_offset: offsets,
            };
          }
          return {
            index,
            text: c.text,
            logprobs,
            finish_reason: c.result.finishReason,
            ...(body.return_token_ids ? { token_ids: Array.from(c.result.tokens) } : {}),
          };
        }),
      );
      return {
        id: id('cmpl'),
        object: 'text_completion',
        created: now(),
        model: modelName,
        choices: out,
        usage: usageOf(promptIds, choices),
        ...(body.return_token_ids ? { prompt_token_ids: promptIds } : {}),
      };
    });
  });

  app.post(
    '/v1/lamer/reload',
    { schema: { body: { type: 'object', required: ['path'], additionalProperties: false, properties: { path: { type: 'string', minLength: 1 } } } } },
    async (req) => {
      if (!options.reload) throw new ApiError(404, 'this server was started without reloading', null, 'not_found');
      if (!options.apiKey) throw new ApiError(403, 'reloading needs the server to be started with an API key', null, 'forbidden', 'permission_error');
      const { path } = req.body as { path: string };
      while (reloading) await reloading;
      let done!: () => void;
      reloading = new Promise<void>((resolve) => (done = resolve));
      try {
        // Between requests: those in flight finish on the old weights first.
        if (inFlight > 0) await new Promise<void>((resolve) => idle.push(resolve));
        let next: Policy;
        try {
          next = await options.reload(path);
        } catch (e) {
          throw new ApiError(400, `cannot load ${path}: ${(e as Error).message}`, 'path', hasCode(e, 'E_CHECKPOINT') ? 'invalid_checkpoint' : 'invalid_value');
        }
        if (next.config.vocabSize !== policy.config.vocabSize || next.config.hiddenSize !== policy.config.hiddenSize) {
          next.dispose();
          throw new ApiError(400, `${path} is not a checkpoint of the served model's base (another vocabulary or width)`, 'path', 'invalid_value');
        }
        const old = { policy, engine };
        policy = next;
        engine = new Engine(policy, { slots });
        context = policy.config.maxPositionEmbeddings;
        old.engine.dispose();
        if (old.policy !== initial) old.policy.dispose();
        log(`[serve] now serving ${path}`);
        return { object: 'lamer.reload', model: modelName, path };
      } finally {
        reloading = null;
        done();
      }
    },
  );

  const address = await app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 8000 });
  const port = (app.server.address() as { port: number }).port;
  return {
    url: address.replace(/\/$/, ''),
    port,
    get engine() {
      return engine;
    },
    stats: () => ({ requests, inFlight, abortedSequences, sequences }),
    async close() {
      await app.close();
      engine.dispose();
      if (policy !== initial) policy.dispose();
    },
  };
}

/** A tool call's arguments as the template wants them: the JSON object when the string parses as one. */
function parseArguments(args: string | Record<string, unknown>): string | Record<string, unknown> {
  if (typeof args !== 'string') return args;
  try {
    const v = JSON.parse(args) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : args;
  } catch {
    return args;
  }
}

export { ApiError };
