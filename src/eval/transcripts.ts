// Transcripts of evaluation trials: what the agent was shown and what it answered, turn by turn, with the reflection
// written after each failed episode. One JSON line per trial is what `lamer eval --transcripts` writes, so a person can
// read why an agent failed, not only how often.

import { LamerError } from '../errors.js';
import { PHASE_REFLECT } from '../rollout/rows.js';
import type { RolloutBatch } from '../rollout/runner.js';

export interface TranscriptTurn {
  prompt: string;
  response: string;
  reward: number;
  /** The response parsed into a valid action. */
  valid: boolean;
}

export interface TranscriptReflection {
  prompt: string;
  response: string;
  /** The response had the <remark> tags. */
  valid: boolean;
  /** Whether it states the episode's facts right, where the environment can check (Environment.checkReflection). */
  correct?: boolean;
}

export interface TranscriptEpisode {
  episode: number;
  won: boolean;
  turns: TranscriptTurn[];
  /** The reflection written after this episode failed, which the next episode's memory holds. */
  reflection?: TranscriptReflection;
}

export interface TrialTranscript {
  /** Task seed. */
  task: number;
  taskType?: string;
  /** 0-based episode of the first win, -1 when none won. */
  wonEpisode: number;
  episodes: TranscriptEpisode[];
}

/** Transcripts as JSON lines (one per trial, each ending in a newline), each led by `fields` (e.g. the method). */
export function transcriptJsonLines(transcripts: readonly TrialTranscript[], fields: Record<string, unknown>): string {
  return transcripts.map((t) => JSON.stringify({ ...fields, ...t }) + '\n').join('');
}

/** One transcript per trial of a rollout, in the order of `batch.trials`. */
export function trialTranscripts(batch: Pick<RolloutBatch, 'table' | 'prompts' | 'responses' | 'trials'>): TrialTranscript[] {
  const { table, prompts, responses, trials } = batch;
  if (prompts.length !== table.length || responses.length !== table.length) {
    throw new LamerError('E_ARG', `trialTranscripts: ${table.length} rows but ${prompts.length} prompts and ${responses.length} responses`);
  }
  // Per trial: its transcript, the checks of its reflections in order, and how many of them rows have filled.
  const byTrial = new Map<string, { transcript: TrialTranscript; correct?: readonly (boolean | undefined)[]; reflections: number }>();
  const out = trials.map((t) => {
    const transcript: TrialTranscript = {
      task: t.seed,
      ...(t.taskType !== undefined ? { taskType: t.taskType } : {}),
      wonEpisode: t.wonEpisode,
      episodes: Array.from({ length: t.episodesPlayed }, (_, k) => ({ episode: k, won: t.won[k] ?? false, turns: [] })),
    };
    byTrial.set(`${t.group}/${t.trial}`, { transcript, correct: t.reflectionsCorrect, reflections: 0 });
    return transcript;
  });
  for (let i = 0; i < table.length; i++) {
    const key = `${table.group[i]}/${table.trial[i]}`;
    const entry = byTrial.get(key);
    if (!entry) throw new LamerError('E_ARG', `trialTranscripts: row ${i} belongs to trial ${key}, which is not in the batch`);
    const { transcript } = entry;
    const episode = table.episode[i];
    if (table.phase[i] === PHASE_REFLECT) {
      // A reflect row carries the episode it precedes (SPEC §1); it reflects on the one before.
      const after = transcript.episodes[episode - 1];
      if (!after) throw new LamerError('E_ARG', `trialTranscripts: reflection row ${i} of trial ${key} precedes episode ${episode}`);
      const correct = entry.correct?.[entry.reflections++];
      after.reflection = { prompt: prompts[i], response: responses[i], valid: table.valid[i] === 1, ...(correct !== undefined ? { correct } : {}) };
    } else {
      const target = transcript.episodes[episode];
      if (!target) throw new LamerError('E_ARG', `trialTranscripts: row ${i} of trial ${key} is in episode ${episode}, beyond those played`);
      target.turns.push({ prompt: prompts[i], response: responses[i], reward: table.reward[i], valid: table.valid[i] === 1 });
    }
  }
  return out;
}
