// Does a WebShop checkpoint read a product id off the results page? The browser's trials (no random moves) on one
// demonstration block of training goals give results pages where the browser clicks a product; the checkpoint answers
// each page's prompt greedily, rendered as the engine renders it (its chat template), and the script counts how often it
// clicks the browser's product and how often a product the page lists at all, and which ids it writes. With --swap each
// page's product ids are first swapped for other catalog ids (sft.swapIds's swap, src/train/id-swap.ts): a model that
// reads the page clicks the swapped product, one that remembers which id goes with which request writes the original
// id, which the page no longer lists (counted as `the original id`).
//
//   npx tsx scripts/webshop-id-probe.ts --model DIR [--pages 12] [--block 200] [--swap]
import { parseArgs } from 'node:util';
import { validateConfig } from '../src/train/config.js';
import { collectDemonstrations } from '../src/train/demonstrations.js';
import { Policy } from '../src/model/policy.js';
import { EngineClient } from '../src/engine/client.js';
import { extractAction } from '../src/envs/common/tags.js';
import { clicked, isProduct } from '../src/envs/webshop/browser.js';
import { configIdSwap } from '../src/train/id-swap.js';
import { Rng } from '../src/util/rng.js';

const { values } = parseArgs({
  options: {
    model: { type: 'string' },
    pages: { type: 'string', default: '12' },
    block: { type: 'string', default: '200' },
    swap: { type: 'boolean', default: false },
  },
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
const rows: { prompt: string; product: string; original: string }[] = [];
for (let i = 0; i < demos.prompts.length && rows.length < pages; i++) {
  const what = clicked(extractAction(demos.responses[i]) ?? '');
  const product = what !== null && isProduct(what) ? what : undefined;
  // A results page (its first line), each page once (rows repeat by sft weights).
  if (product && demos.prompts[i].includes('| now: back to search / page ') && !rows.some((r) => r.prompt === demos.prompts[i]))
    rows.push({ prompt: demos.prompts[i], product, original: product });
}
if (values.swap) {
  const swap = configIdSwap(config);
  rows.forEach((r, k) => {
    const [prompt, response] = swap([r.prompt, `click[${r.product}]`], new Rng(k + 1));
    r.prompt = prompt;
    r.product = response.slice('click['.length, -1);
  });
}

const policy = await Policy.load(values.model);
const client = new EngineClient(policy, { slots: 1 });
const written = new Map<string, number>();
let same = 0;
let listed = 0;
let original = 0;
for (const r of rows) {
  const out = await client.generate({ prompt: r.prompt, maxNewTokens: 24, temperature: 0, topP: 1, topK: 0, seed: 0 });
  const action = extractAction(out.text)?.trim() ?? out.text.trim();
  written.set(action, (written.get(action) ?? 0) + 1);
  if (action === `click[${r.product}]`) same++;
  if (values.swap && action === `click[${r.original}]`) original++;
  const actions = r.prompt.slice(r.prompt.lastIndexOf('available actions: '));
  if (new RegExp(`[ ,]${action.replace(/[[\]]/g, '\\$&')}(,| \\|)`).test(actions)) listed++;
}
client.dispose();
policy.dispose();
console.log(
  `${values.model}: on ${rows.length} results pages${values.swap ? ' (ids swapped)' : ''}, the browser's product ${same}, ` +
    `a listed action ${listed}${values.swap ? `, the original id ${original}` : ''}`,
);
console.log(`  written: ${[...written].map(([a, n]) => `${a} x${n}`).join('; ')}`);
