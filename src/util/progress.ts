// Progress output for long work: a bar with rate and ETA on a terminal, plain periodic lines otherwise (logs, CI).
import type { WriteStream } from 'node:tty';

export interface ProgressOptions {
  label: string;
  total: number;
  unit?: string;
  /** Where to write; default process.stderr. */
  stream?: NodeJS.WritableStream;
  /** Minimum milliseconds between redraws (plain lines: between lines). */
  intervalMs?: number;
  /** Print nothing (for tests and embedding). */
  silent?: boolean;
  /** Work already done before this bar started (a resumed job): counted as done, left out of the rate. */
  done?: number;
}

function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '--:--';
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  const mm = String(m).padStart(2, '0');
  const ss = String(sec).padStart(2, '0');
  return h > 0 ? `${h}:${mm}:${ss}` : `${mm}:${ss}`;
}

export class Progress {
  readonly #opts: Required<Omit<ProgressOptions, 'stream'>> & { stream: NodeJS.WritableStream };
  readonly #start = performance.now();
  #done: number;
  readonly #resumedAt: number;
  #lastDraw = 0;
  #note = '';
  readonly #tty: boolean;

  constructor(options: ProgressOptions) {
    const stream = options.stream ?? process.stderr;
    this.#opts = { unit: 'items', intervalMs: 0, silent: false, done: 0, ...options, stream };
    this.#done = this.#resumedAt = this.#opts.done;
    this.#tty = Boolean((stream as WriteStream).isTTY);
    if (this.#opts.intervalMs === 0) this.#opts.intervalMs = this.#tty ? 100 : 10_000;
  }

  get done(): number {
    return this.#done;
  }

  /** Advances by `n` and optionally sets a short status note (e.g. the latest reward). */
  tick(n = 1, note?: string): void {
    this.#done += n;
    if (note !== undefined) this.#note = note;
    const now = performance.now();
    // The last line is finish()'s, so a completed bar is not printed twice.
    if (now - this.#lastDraw >= this.#opts.intervalMs && this.#done < this.#opts.total) {
      this.#lastDraw = now;
      this.#draw(now);
    }
  }

  /** Changes the total when the amount of work turns out other than announced (e.g. a phase that ended early). */
  setTotal(total: number): void {
    this.#opts.total = total;
  }

  /** Ends the bar with a final line. */
  finish(note?: string): void {
    if (note !== undefined) this.#note = note;
    this.#draw(performance.now(), true);
  }

  #draw(now: number, final = false): void {
    if (this.#opts.silent) return;
    const { label, total, unit, stream } = this.#opts;
    const elapsed = (now - this.#start) / 1000;
    const rate = (this.#done - this.#resumedAt) / Math.max(elapsed, 1e-9);
    const eta = (total - this.#done) / Math.max(rate, 1e-9);
    const frac = total > 0 ? Math.min(1, this.#done / total) : 1;
    const stats = `${this.#done}/${total} ${unit} ${rate.toFixed(rate < 10 ? 2 : 0)}/s elapsed ${formatDuration(elapsed)} eta ${final ? '00:00' : formatDuration(eta)}`;
    const note = this.#note ? ` ${this.#note}` : '';
    if (this.#tty) {
      const width = 24;
      const filled = Math.round(frac * width);
      const bar = '#'.repeat(filled) + '-'.repeat(width - filled);
      stream.write(`\r${label} [${bar}] ${(frac * 100).toFixed(0).padStart(3)}% ${stats}${note}\x1b[K${final ? '\n' : ''}`);
    } else {
      stream.write(`${label}: ${(frac * 100).toFixed(0)}% ${stats}${note}\n`);
    }
  }
}
