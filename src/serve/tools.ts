// Tool calls in a generated reply, for templates that write them as Qwen3's (and Hermes') do: each a JSON object
// {"name", "arguments"} between <tool_call> and </tool_call>. What is outside the blocks stays the reply's content.
import { randomBytes } from 'node:crypto';

export interface ToolCall {
  id: string;
  type: 'function';
  /** `arguments` is a JSON string, as OpenAI's API returns it. */
  function: { name: string; arguments: string };
}

/** The tool calls of `text` and the content left around them, or null when it holds no well-formed call. */
export function parseToolCalls(text: string): { content: string; calls: ToolCall[] } | null {
  const calls: ToolCall[] = [];
  const content = text.replace(/<tool_call>\s*([\s\S]*?)\s*<\/tool_call>/g, (block, json: string) => {
    try {
      const v = JSON.parse(json) as { name?: unknown; arguments?: unknown };
      if (typeof v?.name !== 'string') return block;
      const args = v.arguments === undefined ? {} : v.arguments;
      calls.push({
        id: `call_${randomBytes(12).toString('hex')}`,
        type: 'function',
        function: { name: v.name, arguments: typeof args === 'string' ? args : JSON.stringify(args) },
      });
      return '';
    } catch {
      return block; // not JSON: left in the content as the model wrote it
    }
  });
  return calls.length > 0 ? { content: content.trim(), calls } : null;
}
