// Returns + advantages throughput in rows per second, native kernel vs TS reference, side by side in one process:
//   e2e:    from columns with string anchors: table construction (validation + anchor interning) + computeAdvantages;
//   kernel: from interned ids: the computation alone (outputs reused, as a trainer reuses them each iteration).
// Rollouts look like LaMer's: groups of 8 trials, 3 episodes of 7 turns with a reflection between episodes, Sokoban-
// sized text anchors that recur inside a group. bench/run.ts collects `benches`; running this file prints the figures.

import { pathToFileURL } from 'node:url';
import { computeAdvantages, resolveAdvantageOptions } from '../src/algo/index.js';
import { nativeAdvantages } from '../src/algo/native.js';
import type { KernelColumns } from '../src/algo/native.js';
import { referenceAdvantages } from '../src/algo/reference.js';
import type { AdvantageResult } from '../src/algo/reference.js';
import { rowTableFromColumns } from '../src/rollout/rows.js';
import type { RowColumns, RowTable } from '../src/rollout/rows.js';
import { Rng } from '../src/util/rng.js';

export interface Bench {
  name: string;
  unit: string;
  run: () => Promise<number>;
}

const SIZES = [1e3, 1e4, 1e5, 1e6];
/** Each measurement repeats until this much time has passed (after one warm-up run), at least MIN_REPS times. */
const MIN_SECONDS = 0.5;
const MIN_REPS = 3;

/** A rollout of exactly `rows` rows; anchors are fresh string objects (as env.step would produce them). */
export function rolloutColumns(rows: number, seed = 1): RowColumns {
  const rng = new Rng(seed);
  const c: RowColumns = {
    group: new Int32Array(rows),
    trial: new Int32Array(rows),
    episode: new Int32Array(rows),
    turn: new Int32Array(rows),
    phase: new Uint8Array(rows),
    reward: new Float32Array(rows),
    valid: new Uint8Array(rows),
    won: new Uint8Array(rows),
    anchor: new Array<string>(rows),
  };
  const anchors = c.anchor as string[];
  const board = '1: # # # # # #\n2: # _ _ O _ #\n3: # _ X _ _ #\n4: # _ P _ X #\n5: # O _ _ _ #\n6: # # # # # #\n';
  let i = 0;
  for (let trial = 0; i < rows; trial++) {
    const group = Math.floor(trial / 8);
    for (let episode = 0; episode < 3 && i < rows; episode++) {
      if (episode > 0) {
        c.group[i] = group;
        c.trial[i] = trial;
        c.episode[i] = episode;
        c.phase[i] = 1;
        c.valid[i] = 1;
        anchors[i] = ['reflec', 'tion'].join('');
        i++;
      }
      for (let turn = 0; turn < 7 && i < rows; turn++, i++) {
        c.group[i] = group;
        c.trial[i] = trial;
        c.episode[i] = episode;
        c.turn[i] = turn;
        c.reward[i] = rng.int(10) === 0 ? 1 : -0.1;
        c.valid[i] = rng.int(10) === 0 ? 0 : 1;
        // Turn 0 is the task's initial state; later states are one of 30 per task.
        const state = turn === 0 ? 0 : 1 + rng.int(30);
        anchors[i] = `${board}task ${group} state ${state}`;
      }
    }
  }
  return c;
}

async function rowsPerSecond(rows: number, once: () => void): Promise<number> {
  once(); // warm-up: JIT, the kernel's per-thread workspace
  let reps = 0;
  const start = performance.now();
  while (reps < MIN_REPS || performance.now() - start < MIN_SECONDS * 1000) {
    once();
    reps++;
  }
  return (rows * reps) / ((performance.now() - start) / 1000);
}

function endToEnd(rows: number, backend: 'native' | 'reference'): () => Promise<number> {
  return async () => {
    const columns = rolloutColumns(rows);
    return rowsPerSecond(rows, () => {
      const table = rowTableFromColumns(columns);
      computeAdvantages(table, { backend });
    });
  };
}

function kernelOnly(rows: number, backend: 'native' | 'reference'): () => Promise<number> {
  return async () => {
    const table: RowTable = rowTableFromColumns(rolloutColumns(rows));
    const options = resolveAdvantageOptions({ backend });
    if (backend === 'reference') {
      return rowsPerSecond(rows, () => referenceAdvantages(table, options, table.anchorId));
    }
    const columns: KernelColumns = { ...table, stepKey: table.anchorId };
    const out: AdvantageResult = {
      episodeReward: new Float32Array(rows),
      stepReturn: new Float32Array(rows),
      advantage: new Float32Array(rows),
    };
    return rowsPerSecond(rows, () => nativeAdvantages(columns, options, out));
  };
}

const label = (n: number) => `1e${Math.round(Math.log10(n))}`;

export const benches: Bench[] = SIZES.flatMap((n) => [
  { name: `advantages.e2e.native.${label(n)}`, unit: 'rows/s', run: endToEnd(n, 'native') },
  { name: `advantages.e2e.reference.${label(n)}`, unit: 'rows/s', run: endToEnd(n, 'reference') },
  { name: `advantages.kernel.native.${label(n)}`, unit: 'rows/s', run: kernelOnly(n, 'native') },
  { name: `advantages.kernel.reference.${label(n)}`, unit: 'rows/s', run: kernelOnly(n, 'reference') },
]);

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const results = new Map<string, number>();
  for (const b of benches) {
    const value = await b.run();
    results.set(b.name, value);
    console.log(`${b.name.padEnd(36)} ${(value / 1e6).toFixed(2).padStart(9)} M ${b.unit}`);
  }
  console.log('\nnative / reference:');
  for (const n of SIZES) {
    for (const kind of ['e2e', 'kernel']) {
      const ratio = results.get(`advantages.${kind}.native.${label(n)}`)! / results.get(`advantages.${kind}.reference.${label(n)}`)!;
      console.log(`  ${kind.padEnd(6)} ${label(n)}: ${ratio.toFixed(1)}x`);
    }
  }
}
