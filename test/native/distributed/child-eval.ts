// One rank (or the single process) of the split-evaluation test (test/native/distributed/train.test.ts): evaluates the
// checkpoint argv[3] with method argv[4] on 24 held-out tasks, split over the ranks when torchrun's variables are set;
// writes pass@k and the transcripts to argv[2].
import { writeFileSync } from 'node:fs';
import { DistContext } from '../../../src/train/distributed.js';
import { createNativeRuntime } from '../../../src/train/native-runtime.js';
import { Trainer } from '../../../src/train/trainer.js';
import type { TrialTranscript } from '../../../src/eval/transcripts.js';

const [out, model, method] = process.argv.slice(2);
const dist = DistContext.fromEnv() ?? undefined;
const trainer = new Trainer(
  {
    name: 'eval',
    runsDir: out + '.runs',
    method: method as 'reflexion',
    model: { path: model, promptStyle: 'compact' },
    env: { name: 'minesweeper', options: { rows: 4, cols: 4, mines: 2, maxTurns: 3 } },
    trial: { episodes: 3 },
    rollout: { maxResponseTokens: 12 },
    eval: { tasks: 24, temperature: 1, topP: 1, topK: 0 },
  },
  { progress: false, log: () => {}, dist },
);
const runtime = method.startsWith('random') ? null : await createNativeRuntime(trainer.config, trainer.runDir, dist);
let transcripts: TrialTranscript[] = [];
const event = await trainer.evaluate(runtime, 0, undefined, { onTranscripts: (t) => (transcripts = t) });
writeFileSync(out, JSON.stringify({ passAtK: event.passAtK, firstWin: event.firstWin, tasks: event.tasks, transcripts }));
await runtime?.dispose();
await dist?.close();
