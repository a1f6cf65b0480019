// Tool calls parsed out of a reply as Qwen3's template writes them, and `lamer serve`'s usage errors.
import { describe, expect, it } from 'vitest';
import { parseToolCalls } from '../../src/serve/tools.js';
import { command as serveCommand } from '../../src/cli/commands/serve.js';
import { captured } from '../helpers/index.js';

describe('parseToolCalls', () => {
  it('takes each well-formed block out of the content, arguments as a JSON string', () => {
    const r = parseToolCalls(
      'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n<tool_call>{"name": "now"}</tool_call>',
    );
    expect(r!.content).toBe('Let me check.');
    expect(r!.calls.map((c) => [c.type, c.function.name, c.function.arguments])).toEqual([
      ['function', 'get_weather', '{"city":"Paris"}'],
      ['function', 'now', '{}'],
    ]);
    expect(new Set(r!.calls.map((c) => c.id)).size).toBe(2);
    expect(r!.calls[0].id).toMatch(/^call_[0-9a-f]{24}$/);
  });

  it('leaves text without a well-formed call as it is', () => {
    expect(parseToolCalls('no call here')).toBeNull();
    expect(parseToolCalls('<tool_call>{not json}</tool_call>')).toBeNull();
    expect(parseToolCalls('<tool_call>{"arguments": {}}</tool_call>')).toBeNull();
    const partial = parseToolCalls('<tool_call>{"name": "a"}</tool_call> and <tool_call>oops</tool_call>');
    expect(partial!.calls).toHaveLength(1);
    expect(partial!.content).toBe('and <tool_call>oops</tool_call>');
  });
});

describe('lamer serve usage', () => {
  it('refuses a missing model, a bad port or slot count with exit 2', async () => {
    for (const argv of [[], ['--model', 'x', '--port', '70000'], ['--model', 'x', '--slots', '0'], ['--model', 'x', '--device', 'tpu']]) {
      const r = await captured(() => serveCommand.run(argv));
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.err).toMatch(/usage: lamer serve/);
    }
  });
});
