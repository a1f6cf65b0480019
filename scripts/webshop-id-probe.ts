// Does a WebShop checkpoint read a product id off the results page? The browser's trials (no random moves) on one
// demonstration block of training goals give results pages where the browser clicks a product; the checkpoint answers
// each page's prompt greedily, rendered as the engine renders it (its chat template), and the script counts how often it
// clicks the browser's product and how often a product the page lists at all, and which ids it writes.
//
//   npx tsx scripts/webshop-id-probe.ts --model DIR [--pages 12] [--block 200]
import { parseArgs } from 'node:util';
import { validateConfig } from '../src/train/config.js';
import { collectDemonstrations } from '../src/train/demonstrations.js';
import { Policy } from '../src/model/policy.js';
import { EngineClient } from '../src/engine/client.js';
import { extractAction } from '../src/envs/common/tags.js';

const { values } = parseArgs({
  options: { model: { type: 'string' }, pages: { type: 'string', default: '12' }, block: { type: 'string', default: '200' } },
});
const pages = Number(values.pages);
const block = Number(values.block);
if (!values.model || !(Number.isInteger(pages) && pages > 0) || !(Number.isInteger(block) && block >= 0 && block < 256)) {
  console.error('usage: npx tsx scripts/webshop-id-probe.ts --model DIR [--pages N>0] [--block 0..255]');
  process.exit(2);
}

const config = validateConfig({
  name: 'id-probe',
  model: { init: { preset: 'tiny', tokenizer: 'compact-webshop', seed: 0 }, promptStyle: 'compact' },
  env: { name: 'webshop', options: { maxTurns: 12 } },
  trial: { episodes: 3, markRefused: true },
  sft: { trials: Math.max(40, pages * 4), trialsPerTask: 1, noise: 0, taskSeed: block },
});
const demos = await collectDemonstrations(config);
const rows: { prompt: string; product: string }[] = [];
for (let i = 0; i < demos.prompts.length && rows.length < pages; i++) {
  const product = /^click\[(b[0-9a-z]{9})\]$/.exec(extractAction(demos.responses[i])?.trim() ?? '')?.[1];
  // A results page (its first line), each page once (rows repeat by sft weights).
  if (product && demos.prompts[i].includes('| now: back to search / page ') && !rows.some((r) => r.prompt === demos.prompts[i]))
    rows.push({ prompt: demos.prompts[i], product });
}

const policy = await Policy.load(values.model);
const client = new EngineClient(policy, { slots: 1 });
const written = new Map<string, number>();
let same = 0;
let listed = 0;
for (const r of rows) {
  const out = await client.generate({ prompt: r.prompt, maxNewTokens: 24, temperature: 0, topP: 1, topK: 0, seed: 0 });
  const action = extractAction(out.text)?.trim() ?? out.text.trim();
  written.set(action, (written.get(action) ?? 0) + 1);
  if (action === `click[${r.product}]`) same++;
  const actions = r.prompt.slice(r.prompt.lastIndexOf('available actions: '));
  if (new RegExp(`[ ,]${action.replace(/[[\]]/g, '\\$&')}(,| \\|)`).test(actions)) listed++;
}
client.dispose();
policy.dispose();
console.log(`${values.model}: on ${rows.length} results pages, the browser's product ${same}, a listed action ${listed}`);
console.log(`  written: ${[...written].map(([a, n]) => `${a} x${n}`).join('; ')}`);
