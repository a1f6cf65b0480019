// The request bodies the server accepts, as JSON Schemas (Fastify validates them with Ajv before a handler runs, and
// a field that fails is named in the 400 it answers) and as the types the handlers read. Fields OpenAI's API defines
// that this server does not implement (audio, response_format, logit_bias, ...) are refused by name rather than
// ignored, so a client never believes one took effect.

export type ContentPart = { type: 'text'; text: string } | { type: string; [k: string]: unknown };

export interface ChatMessageIn {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  content?: string | ContentPart[] | null;
  name?: string;
  tool_calls?: Array<{ id?: string; type?: 'function'; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

interface Common {
  model: string;
  max_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  top_k?: number | null;
  n?: number | null;
  stop?: string | string[] | null;
  seed?: number | null;
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
  return_token_ids?: boolean | null;
  user?: string;
}

export interface ChatRequest extends Common {
  messages: ChatMessageIn[];
  max_completion_tokens?: number | null;
  logprobs?: boolean | null;
  top_logprobs?: number | null;
  tools?: unknown[];
  tool_choice?: 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };
  enable_thinking?: boolean | null;
}

export interface CompletionRequest extends Common {
  prompt: string | number[];
  logprobs?: number | null;
}

const nullable = (schema: Record<string, unknown>) => ({ anyOf: [schema, { type: 'null' }] });
const MAX_N = 16;

const common = {
  model: { type: 'string', minLength: 1 },
  max_tokens: nullable({ type: 'integer', minimum: 1 }),
  temperature: nullable({ type: 'number', minimum: 0, maximum: 2 }),
  top_p: nullable({ type: 'number', exclusiveMinimum: 0, maximum: 1 }),
  top_k: nullable({ type: 'integer', minimum: -1 }),
  n: nullable({ type: 'integer', minimum: 1, maximum: MAX_N }),
  stop: nullable({ anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, maxItems: 4 }] }),
  seed: nullable({ type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
  stream: nullable({ type: 'boolean' }),
  stream_options: nullable({ type: 'object', additionalProperties: false, properties: { include_usage: { type: 'boolean' } } }),
  return_token_ids: nullable({ type: 'boolean' }),
  user: { type: 'string' },
};

const toolCall = {
  type: 'object',
  required: ['function'],
  properties: {
    id: { type: 'string' },
    type: { const: 'function' },
    function: { type: 'object', required: ['name', 'arguments'], properties: { name: { type: 'string' }, arguments: { type: 'string' } } },
  },
};

export const CHAT_SCHEMA = {
  type: 'object',
  required: ['model', 'messages'],
  additionalProperties: false,
  properties: {
    ...common,
    messages: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['role'],
        additionalProperties: false,
        properties: {
          role: { enum: ['system', 'developer', 'user', 'assistant', 'tool'] },
          content: nullable({
            anyOf: [
              { type: 'string' },
              { type: 'array', items: { type: 'object', required: ['type'], properties: { type: { type: 'string' }, text: { type: 'string' } } } },
            ],
          }),
          name: { type: 'string' },
          tool_calls: { type: 'array', items: toolCall },
          tool_call_id: { type: 'string' },
        },
      },
    },
    max_completion_tokens: nullable({ type: 'integer', minimum: 1 }),
    logprobs: nullable({ type: 'boolean' }),
    top_logprobs: nullable({ type: 'integer', minimum: 0, maximum: 20 }),
    tools: {
      type: 'array',
      items: {
        type: 'object',
        required: ['type', 'function'],
        properties: { type: { const: 'function' }, function: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } },
      },
    },
    tool_choice: {
      anyOf: [
        { enum: ['none', 'auto', 'required'] },
        { type: 'object', required: ['type', 'function'], properties: { type: { const: 'function' }, function: { type: 'object', required: ['name'] } } },
      ],
    },
    parallel_tool_calls: { type: 'boolean' },
    enable_thinking: nullable({ type: 'boolean' }),
  },
} as const;

export const COMPLETION_SCHEMA = {
  type: 'object',
  required: ['model', 'prompt'],
  additionalProperties: false,
  properties: {
    ...common,
    prompt: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'integer', minimum: 0 }, minItems: 1 }] },
    logprobs: nullable({ type: 'integer', minimum: 0, maximum: 5 }),
    echo: { const: false },
  },
} as const;
