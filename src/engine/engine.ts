// The generation engine's scheduler: every concurrent `generate` call becomes one row of the native engine's batch.
//
// Calls made while a step is running wait in a queue and join at the next step (continuous batching); a request that
// finishes leaves the batch in the same step, freeing its slot. Admission is bounded by the slot count and by a token
// budget: the live requests together may reserve at most `tokenBudget` KV-cache tokens (prompt + max new tokens each).
// Requests are admitted in arrival order (no overtaking), so a long prompt cannot starve.
//
// Stop ids end a sequence natively (the stop token is the last token returned). Stop strings are checked here, on the
// decoded tail of each request after every step; the token that completes one is the last token returned.
import { deviceProfile } from '../model/device.js';
import { LamerError } from '../errors.js';
import type { Policy } from '../model/policy.js';
import { addon } from '../native/addon.js';
import type { NativeEngine, NativeEngineRequest, NativeEngineStepResult } from '../native/types.js';
import { parseOptions } from '../util/options.js';
import { timeBook } from '../util/timing.js';
import { engineOptionsSchema, precaptureSchema, type EngineOptions, type EnginePrecapture } from './options.js';

export type FinishReason = 'stop' | 'length';

export type { EngineOptions, EnginePrecapture } from './options.js';

export interface EngineRequest {
  promptIds: ArrayLike<number>;
  maxNewTokens: number;
  /** 0: greedy. Default 1. */
  temperature?: number;
  /** Default 1 (no cut). */
  topP?: number;
  /** 0 or less: no cut (default). */
  topK?: number;
  /** Token ids that end the sequence; default the policy's stop ids (generation_config.json). */
  stopIds?: readonly number[];
  /** Strings that end the sequence once the decoded response contains one. */
  stop?: readonly string[];
  /** Seed of this request's sampling (integer in [0, 2^53)); default a random one. */
  seed?: number;
  signal?: AbortSignal;
  /** Called with each piece of the response as it is decoded (streaming). */
  onTokens?: (tokens: Int32Array, logprobs: Float32Array) => void;
}

export interface EngineResult {
  tokens: Int32Array;
  /** log_softmax(logits / T)[token] of each token (T = 1 for greedy), never with top-k/top-p (SPEC §5). */
  logprobs: Float32Array;
  finishReason: FinishReason;
  /** What ended a `stop`: a stop id (the last token) or a stop string. */
  stoppedBy?: { tokenId: number } | { string: string };
}

export interface EngineStats {
  /** Native step calls. */
  calls: number;
  /** Decode steps (each decodes every live row once). */
  decodeSteps: number;
  /** Sum over decode steps of the rows decoded: mean occupancy = rowSteps / (decodeSteps * slots). */
  rowSteps: number;
  /**
   * Sum over decode steps of min(slots, requests live or waiting when the step began): the rows a step could have
   * decoded. rowSteps / demandSteps is how well the scheduler keeps slots filled when there is work.
   */
  demandSteps: number;
  /** Tokens returned (prefill and decode). */
  tokens: number;
  /** Wall seconds of the native calls, and of their prefill forwards and decode steps. */
  stepSeconds: number;
  prefillSeconds: number;
  decodeSeconds: number;
  /** Prompt tokens taken from the prefix cache, and prompt tokens computed. */
  reusedPromptTokens: number;
  prefilledPromptTokens: number;
  /** Prompt-token columns the prefill forwards ran, padding included: paddedPromptTokens / prefilledPromptTokens is
   * the prefill's padding overhead. */
  paddedPromptTokens: number;
  /** Prompt tokens the prefix cache holds after the last call. */
  cachedPrefixTokens: number;
  requests: number;
  peakActive: number;
  /** Tokens each slot of the KV cache holds after the last call (slots x slotCapacity tokens are allocated). */
  slotCapacity: number;
  /** Decode steps replayed from captured CUDA graphs (the rest ran eagerly). */
  graphSteps: number;
  /** CUDA graphs held after the last call. */
  graphs: number;
  /** Nodes of the largest CUDA graph captured so far: the kernels, copies and memsets one decode step of the biggest
   * bucket launches on the GPU (0 without graphs). */
  graphNodes: number;
  /** Why CUDA graph capture was turned off, once it has been. */
  graphError?: string;
  /**
   * Bytes of keys/values the decode steps' attention read, all layers (kvBytesRead / decodeSteps per step), and the
   * bytes of the decoding rows' live columns alone, the least any attention reads. On the CPU (packed rows, a mask
   * up to the longest row) and with liveAttention off the first exceeds the second by the padding; with live-length
   * attention on CUDA they differ only by the rows a step computes for nothing (free slots below a decoding one).
   */
  kvBytesRead: number;
  kvBytesLive: number;
}

interface Pending {
  id: number;
  request: NativeEngineRequest;
  reserve: number;
  stop: readonly string[];
  /** Tokens of the longest stop string's worst case (3 UTF-8 bytes per UTF-16 unit, one byte per token at least). */
  stopWindow: number;
  tokens: number[];
  logprobs: number[];
  onTokens?: EngineRequest['onTokens'];
  resolve: (r: EngineResult) => void;
  reject: (e: unknown) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
  done: boolean;
}

function checkNumber(name: string, v: unknown, ok: (x: number) => boolean, expected: string, where = 'generate'): number {
  if (typeof v !== 'number' || !ok(v)) throw new LamerError('E_ARG', `${where}: ${name} must be ${expected}, found ${JSON.stringify(v)}`);
  return v;
}

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The generation was aborted', 'AbortError');
}

export class Engine {
  readonly slots: number;
  readonly tokenBudget: number;
  readonly stepsPerCall: number;
  readonly #policy: Policy;
  #native: NativeEngine | null;
  readonly #queue: Pending[] = [];
  readonly #live = new Map<number, Pending>();
  #reserved = 0;
  #cancel: number[] = [];
  #clearPrefixes = false;
  #nextId = 1;
  #running = false;
  readonly #stats: EngineStats = {
    calls: 0,
    decodeSteps: 0,
    rowSteps: 0,
    demandSteps: 0,
    tokens: 0,
    stepSeconds: 0,
    prefillSeconds: 0,
    decodeSeconds: 0,
    reusedPromptTokens: 0,
    prefilledPromptTokens: 0,
    paddedPromptTokens: 0,
    cachedPrefixTokens: 0,
    requests: 0,
    peakActive: 0,
    slotCapacity: 0,
    graphSteps: 0,
    graphs: 0,
    graphNodes: 0,
    kvBytesRead: 0,
    kvBytesLive: 0,
  };
  /** The start-up capture (option precapture), which the first step waits for. */
  #ready: Promise<void> = Promise.resolve();

  constructor(policy: Policy, options: EngineOptions = {}) {
    const { tokenBudget, stepsPerCall, precapture, ...native } = parseOptions(engineOptionsSchema, options, 'engine option');
    const profile = deviceProfile(policy.device);
    this.slots = native.slots;
    this.tokenBudget = tokenBudget;
    this.stepsPerCall = stepsPerCall ?? profile.stepsPerCall;
    this.#policy = policy;
    this.#native = addon().createEngine(policy.native, { ...native, slotLayout: native.slotLayout ?? profile.slotLayout });
    if (precapture !== undefined) void this.precapture(precapture).catch(() => undefined);
  }

  /**
   * Captures the CUDA graphs of every bucket (rows and attended widths, powers of two up to the slots and to
   * `columns`) for rows sampling with the given settings, so that a benchmark or a latency-bound server captures
   * nothing while requests wait. The engine must be idle (call it before the first generate, or with none in flight).
   * Resolves with the graphs held and the milliseconds it took; on the CPU it captures nothing.
   */
  precapture(p: EnginePrecapture): Promise<{ graphs: number; ms: number; error?: string }> {
    // One capture after another, and the first step after them all.
    const run = this.#ready.then(() => this.#precapture(p));
    this.#ready = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  async #precapture(p: EnginePrecapture): Promise<{ graphs: number; ms: number; error?: string }> {
    const native = this.#native;
    if (!native) throw new LamerError('E_DISPOSED', 'this Engine was disposed');
    const { columns, ...sampling } = parseOptions(precaptureSchema, p, 'engine.precapture option');
    if (this.#running || this.#live.size > 0 || this.#queue.length > 0) {
      throw new LamerError('E_ARG', 'engine.precapture: the engine is generating; call it before the first generate or once every request has finished');
    }
    const start = performance.now();
    const out = await native.capture(sampling, columns);
    this.#stats.graphs = out.graphs;
    if (out.error !== undefined) this.#stats.graphError = out.error;
    return { graphs: out.graphs, ms: performance.now() - start, ...(out.error !== undefined ? { error: out.error } : {}) };
  }

  /**
   * Frees what an idle engine holds on its device: the KV cache, the CUDA graphs and their memory pool, the prefix
   * cache (on CUDA the freed memory goes back to the device). The next request allocates them again (and captures
   * its graphs again). A trainer calls it between a rollout and its update, so that the train step has that memory.
   */
  async release(): Promise<void> {
    await this.#ready;
    const native = this.#native;
    if (!native) throw new LamerError('E_DISPOSED', 'this Engine was disposed');
    if (this.#running || this.#live.size > 0 || this.#queue.length > 0) {
      throw new LamerError('E_ARG', 'engine.release: the engine is generating; call it once every request has finished');
    }
    await native.release();
    this.#stats.graphs = 0;
    this.#stats.graphNodes = 0;
    this.#stats.slotCapacity = 0;
    this.#stats.cachedPrefixTokens = 0;
  }

  /**
   * Empties the prefix cache before the next step. A trainer calls it at the start of each rollout and evaluation,
   * so that what a phase computes does not depend on prompts an earlier phase happened to leave behind (a resumed
   * run then reproduces an uninterrupted one bit for bit).
   */
  clearPrefixCache(): void {
    this.#clearPrefixes = true;
  }

  /** Requests waiting for a slot, and requests decoding now. */
  get waiting(): number {
    return this.#queue.length;
  }

  get active(): number {
    return this.#live.size;
  }

  stats(): EngineStats {
    return { ...this.#stats };
  }

  /** Generates one response; concurrent calls share the batch. */
  generate(req: EngineRequest): Promise<EngineResult> {
    if (!this.#native) return Promise.reject(new LamerError('E_DISPOSED', 'this Engine was disposed'));
    let pending: Pending;
    try {
      pending = this.#prepare(req);
    } catch (e) {
      return Promise.reject(e);
    }
    const promise = new Promise<EngineResult>((resolve, reject) => {
      pending.resolve = resolve;
      pending.reject = reject;
    });
    if (req.signal) {
      if (req.signal.aborted) return Promise.reject(abortError(req.signal));
      const signal = req.signal;
      pending.signal = signal;
      pending.onAbort = () => this.#abort(pending, abortError(signal));
      signal.addEventListener('abort', pending.onAbort, { once: true });
    }
    this.#queue.push(pending);
    this.#stats.requests++;
    this.#kick();
    return promise;
  }

  #prepare(req: EngineRequest): Pending {
    const vocab = this.#policy.config.vocabSize;
    const prompt = Int32Array.from(req.promptIds ?? []);
    if (prompt.length === 0) throw new LamerError('E_ARG', 'generate: promptIds must hold at least one token');
    for (let i = 0; i < prompt.length; i++) {
      if (!(prompt[i] >= 0 && prompt[i] < vocab)) {
        throw new LamerError('E_ARG', `generate: promptIds[${i}] = ${prompt[i]} is outside the vocabulary [0, ${vocab})`);
      }
    }
    const maxNewTokens = checkNumber('maxNewTokens', req.maxNewTokens, (x) => Number.isInteger(x) && x >= 1, 'an integer >= 1');
    const temperature = checkNumber('temperature', req.temperature ?? 1, (x) => Number.isFinite(x) && x >= 0, 'a number >= 0 (0 is greedy)');
    const topP = checkNumber('topP', req.topP ?? 1, (x) => x > 0 && x <= 1, 'in (0, 1]');
    const topK = checkNumber('topK', req.topK ?? 0, (x) => Number.isInteger(x), 'an integer (0 or less: no cut)');
    const seed =
      req.seed === undefined
        ? Math.floor(Math.random() * 2 ** 48)
        : checkNumber('seed', req.seed, (x) => Number.isInteger(x) && x >= 0 && x <= Number.MAX_SAFE_INTEGER, 'an integer in [0, 2^53)');
    const stopIds = Int32Array.from(req.stopIds ?? this.#policy.stopIds);
    const stop = (req.stop ?? []).filter((s) => s.length > 0);
    if (stop.length > 0 && !this.#policy.tokenizer) {
      throw new LamerError('E_ARG', 'generate: stop strings need a tokenizer, and this checkpoint has no tokenizer.json');
    }
    const reserve = prompt.length + maxNewTokens;
    if (reserve > this.tokenBudget) {
      throw new LamerError(
        'E_ARG',
        `generate: prompt (${prompt.length} tokens) + maxNewTokens (${maxNewTokens}) exceeds the engine's tokenBudget ${this.tokenBudget}`,
      );
    }
    const id = this.#nextId++;
    return {
      id,
      request: { id, prompt, maxNewTokens, temperature, topP, topK, stopIds, seed },
      reserve,
      stop,
      stopWindow: 3 * Math.max(0, ...stop.map((s) => s.length)) + 4,
      tokens: [],
      logprobs: [],
      onTokens: req.onTokens,
      resolve: () => undefined,
      reject: () => undefined,
      done: false,
    };
  }

  #kick(): void {
    if (this.#running) return;
    this.#running = true;
    // After the current tick, so calls made together (a runner starting many trials) share the first step.
    setImmediate(() => void this.#loop());
  }

  #admit(): NativeEngineRequest[] {
    const add: NativeEngineRequest[] = [];
    while (this.#queue.length > 0 && this.#live.size < this.slots) {
      const p = this.#queue[0];
      if (this.#live.size > 0 && this.#reserved + p.reserve > this.tokenBudget) break;
      this.#queue.shift();
      this.#live.set(p.id, p);
      this.#reserved += p.reserve;
      add.push(p.request);
    }
    this.#stats.peakActive = Math.max(this.#stats.peakActive, this.#live.size);
    return add;
  }

  async #loop(): Promise<void> {
    try {
      await this.#ready; // a start-up capture (never rejects: a failed one leaves graphs to first use)
      let first = true;
      while (this.#native && (this.#queue.length > 0 || this.#live.size > 0)) {
        // Let the callers whose requests just finished run first (their continuations are queued microtasks): a trial
        // that answers the environment and asks again at once then joins this step rather than the next one.
        if (!first) await new Promise<void>((resolve) => setImmediate(resolve));
        first = false;
        if (!this.#native) break;
        const add = this.#admit();
        const demand = Math.min(this.slots, this.#live.size + this.#queue.length);
        const cancel = this.#cancel;
        this.#cancel = [];
        const clearPrefixes = this.#clearPrefixes;
        this.#clearPrefixes = false;
        let out: NativeEngineStepResult;
        const t0 = performance.now();
        try {
          out = await this.#native.step(add, cancel, this.stepsPerCall, clearPrefixes);
        } catch (e) {
          // The native engine forgot every request: fail those it held, keep the queue.
          for (const p of [...this.#live.values()]) this.#settle(p, e);
          continue;
        }
        // The call's wall time, split into its prefill forwards, its decode steps and the rest (scheduling, copies,
        // the hand-over between threads).
        const wall = (performance.now() - t0) / 1000;
        timeBook.add('prefill', out.prefillSeconds);
        timeBook.add('decode', out.decodeSeconds);
        timeBook.add('engineOther', Math.max(0, wall - out.prefillSeconds - out.decodeSeconds));
        this.#stats.stepSeconds += wall;
        this.#stats.prefillSeconds += out.prefillSeconds;
        this.#stats.decodeSeconds += out.decodeSeconds;
        this.#stats.calls++;
        this.#stats.decodeSteps += out.steps;
        this.#stats.rowSteps += out.steps * out.rows;
        this.#stats.demandSteps += out.steps * demand;
        this.#stats.reusedPromptTokens += out.reused;
        this.#stats.prefilledPromptTokens += out.prefilled;
        this.#stats.paddedPromptTokens += out.padded;
        this.#stats.cachedPrefixTokens = out.prefixTokens;
        this.#stats.slotCapacity = out.capacity;
        this.#stats.graphSteps += out.graphSteps;
        this.#stats.graphs = out.graphs;
        this.#stats.graphNodes = out.graphNodes;
        this.#stats.kvBytesRead += out.kvBytesRead;
        this.#stats.kvBytesLive += out.kvBytesLive;
        if (out.graphError !== undefined) this.#stats.graphError = out.graphError;
        timeBook.time('engineResults', () => {
          for (const r of out.results) this.#receive(r.id, r.tokens, r.logprobs, r.finish);
        });
      }
    } finally {
      this.#running = false;
    }
    if (this.#native && this.#queue.length > 0) this.#kick();
  }

  #receive(id: number, tokens: Int32Array, logprobs: Float32Array, finish: 'stop' | 'length' | null): void {
    const p = this.#live.get(id);
    if (!p || p.done) return; // aborted or already ended by a stop string
    this.#stats.tokens += tokens.length;
    const start = p.tokens.length;
    for (let i = 0; i < tokens.length; i++) {
      p.tokens.push(tokens[i]);
      p.logprobs.push(logprobs[i]);
    }
    let reason: FinishReason | null = finish;
    let stoppedBy: EngineResult['stoppedBy'];
    if (finish === 'stop') stoppedBy = { tokenId: p.tokens[p.tokens.length - 1] };
    if (p.stop.length > 0) {
      const hit = this.#findStopString(p, start);
      if (hit) {
        p.tokens.length = hit.end;
        p.logprobs.length = hit.end;
        reason = 'stop';
        stoppedBy = { string: hit.string };
        if (finish === null) this.#cancel.push(id);
      }
    }
    if (p.onTokens && p.tokens.length > start) {
      p.onTokens(Int32Array.from(p.tokens.slice(start)), Float32Array.from(p.logprobs.slice(start)));
    }
    if (reason !== null) {
      this.#settle(p, null, { tokens: Int32Array.from(p.tokens), logprobs: Float32Array.from(p.logprobs), finishReason: reason, stoppedBy });
    }
  }

  /** The first stop string completed by a token at index >= start, and the token count up to and including it. */
  #findStopString(p: Pending, start: number): { end: number; string: string } | null {
    const tokenizer = this.#policy.tokenizer!;
    // Any occurrence ending in the new tokens begins at most stopWindow tokens before them.
    const from = Math.max(0, start - p.stopWindow);
    const found = (end: number): string | undefined => {
      const text = tokenizer.decode(p.tokens.slice(from, end));
      return p.stop.find((s) => text.includes(s));
    };
    if (found(p.tokens.length) === undefined) return null;
    for (let end = start + 1; end <= p.tokens.length; end++) {
      const s = found(end);
      if (s !== undefined) return { end, string: s };
    }
    return null;
  }

  #settle(p: Pending, error: unknown, result?: EngineResult): void {
    if (p.done) return;
    p.done = true;
    if (this.#live.delete(p.id)) this.#reserved -= p.reserve;
    if (p.signal && p.onAbort) p.signal.removeEventListener('abort', p.onAbort);
    if (result) p.resolve(result);
    else p.reject(error);
  }

  #abort(p: Pending, error: unknown): void {
    if (p.done) return;
    const queued = this.#queue.indexOf(p);
    if (queued >= 0) this.#queue.splice(queued, 1);
    else if (this.#live.has(p.id)) this.#cancel.push(p.id);
    this.#settle(p, error);
  }

  /** Fails every waiting and live request and releases the native engine (its KV cache). */
  dispose(): void {
    if (!this.#native) return;
    const error = new LamerError('E_DISPOSED', 'the Engine was disposed before this request finished');
    for (const p of [...this.#queue, ...this.#live.values()]) this.#settle(p, error);
    this.#queue.length = 0;
    this.#native.dispose();
    this.#native = null;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.dispose();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}
