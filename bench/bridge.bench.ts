// The native bridge: exposing tensor memory to JS, and the cost of a call across the boundary.
import { addon } from '../src/native/addon.js';
import type { Bench, BenchResult } from './run.js';
import { medianMs, rate, rateSync } from './util.js';

const MB = 1024 * 1024;

async function viewVsCopy(): Promise<BenchResult[]> {
  const native = addon();
  const big = native.full([(256 * MB) / 4], 1, 'float32', 'cpu'); // 256 MB
  // Each round takes a fresh handle on the same tensor, so its view (or copy) is made anew.
  const expose = () => {
    const h = native.alias(big);
    const d = h.data;
    if (d.length !== big.numel) throw new Error('wrong length');
    h.dispose();
  };
  const viewMs = await medianMs(expose, 9);
  process.env.LAMER_NO_EXTERNAL_BUFFERS = '1'; // the bridge's copying fallback
  let copyMs: number;
  try {
    copyMs = await medianMs(expose, 5);
  } finally {
    delete process.env.LAMER_NO_EXTERNAL_BUFFERS;
  }
  big.dispose();
  return [
    { name: 'bridge.expose256MB.view', value: viewMs, unit: 'ms' },
    { name: 'bridge.expose256MB.copy', value: copyMs, unit: 'ms' },
    { name: 'bridge.expose256MB.copy/view', value: copyMs / viewMs, unit: 'x' },
  ];
}

async function callRates(): Promise<BenchResult[]> {
  const native = addon();
  const sync = rateSync(() => native.noop());
  const asyncSeq = await rate(() => native.noopAsync('cpu'));
  // 64 calls in flight at a time: the executor's throughput when the queue is never empty.
  const batch = 64;
  const asyncBatched = (await rate(() => Promise.all(Array.from({ length: batch }, () => native.noopAsync('cpu'))))) * batch;
  return [
    { name: 'bridge.calls.sync', value: sync, unit: 'calls/s' },
    { name: 'bridge.calls.executor.sequential', value: asyncSeq, unit: 'calls/s' },
    { name: 'bridge.calls.executor.64-in-flight', value: asyncBatched, unit: 'calls/s' },
  ];
}

export const benches: Bench[] = [
  { name: 'bridge.expose256MB', unit: 'ms', run: viewVsCopy },
  { name: 'bridge.calls', unit: 'calls/s', run: callRates },
];
