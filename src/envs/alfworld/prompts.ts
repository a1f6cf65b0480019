// ALFWorld prompt texts in the project's styles (SPEC §2, §8): the framing (memory, trial line, windowed trajectory)
// is common to all environments; this file holds ALFWorld's own part, which names no command form (game files of
// version 2.1.1 say `put X in/on Y`, later ones `move X to Y`): every observation lists the admissible commands.

import { composePlayPrompt, composeReflectPrompt, type CompactObservation } from '../common/framing.js';
import type { PlayPromptInput, ReflectPromptInput } from '../types.js';

export interface AlfWorldPromptSettings {
  /** The task sentence (after "Your task is to: "). */
  goal: string;
  maxTurns: number;
}

export function alfWorldRules(s: AlfWorldPromptSettings): string {
  return [
    'You are an expert agent operating in the ALFRED embodied household environment, through text.',
    `Your task is to: ${s.goal}`,
    'The room has numbered receptacles (countertop 1, cabinet 2, fridge 1, ...) holding numbered objects (apple 1, ...).',
    'You carry one object at a time; closed receptacles must be opened to see or take what is inside; a clean, hot',
    'or cool object is cleaned in a sinkbasin, heated in a microwave or cooled in a fridge while you carry it; to look',
    'at something under a lamp, carry it to the lamp and use the lamp. Any receptacle of the named type will do.',
    'Each observation ends with the admissible actions; anything else gets "Nothing happens.".',
    `You have at most ${s.maxTurns} actions.`,
  ].join('\n');
}

export function alfWorldAnswerFormat(): string {
  return (
    'First reason step by step about where the needed object can be and what remains to be done. Then give exactly' +
    ' one admissible action inside <action> and </action>, for example: <action>go to countertop 1</action>'
  );
}

const REFLECT_HINT =
  'Name the step that failed or the places searched in vain, say where the needed objects and receptacles are, and' +
  ' write the sequence of commands to use next time.';

/** An observation as the project's styles show it: the game's text, then the admissible commands. */
export function withAdmissible(text: string, admissible: readonly string[]): string {
  return `${text}\n\nAdmissible actions: ${admissible.join(', ')}`;
}

/** Compact: the non-empty lines but the banner and the task (the prompt opens with it), the admissible actions as `can: ...`. */
export const compactAlfWorldObservation: CompactObservation = (text) =>
  text
    .split('\n')
    .map((line) => line.trim().replace(/^Admissible actions: /, 'can: '))
    .filter((line) => line.length > 0 && !line.startsWith('-= Welcome') && !line.startsWith('Your task is to: '))
    .join(' / ');

export function alfWorldPlayPrompt(input: PlayPromptInput, s: AlfWorldPromptSettings): string {
  return composePlayPrompt({
    input,
    rules: alfWorldRules(s),
    answerFormat: alfWorldAnswerFormat(),
    compactTag: `alf ${s.goal}`,
    compactObservation: compactAlfWorldObservation,
  });
}

export function alfWorldReflectPrompt(input: ReflectPromptInput, s: AlfWorldPromptSettings): string {
  return composeReflectPrompt({
    input,
    rules: alfWorldRules(s),
    reflectHint: REFLECT_HINT,
    compactTag: `alf ${s.goal}`,
    compactObservation: compactAlfWorldObservation,
  });
}
