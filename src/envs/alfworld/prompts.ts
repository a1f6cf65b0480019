// ALFWorld prompt texts (SPEC §2, §8). The framing (memory, trial line, windowed trajectory) is common to all
// environments; this file holds what is ALFWorld's own: the role, the task, the command grammar and answer format.

import { composePlayPrompt, composeReflectPrompt, type CompactObservation } from '../common/framing.js';
import type { PlayPromptInput, ReflectPromptInput } from '../types.js';

export interface AlfWorldPromptSettings {
  goal: string;
  maxTurns: number;
}

export function alfWorldRules(s: AlfWorldPromptSettings): string {
  return [
    'You are an expert agent operating in the ALFRED embodied household environment, through text.',
    `Your task is to: ${s.goal}`,
    'The room has numbered receptacles (countertop 1, cabinet 2, fridge 1, ...) holding numbered objects (apple 1, ...).',
    'Commands: go to [receptacle], open [receptacle], close [receptacle], take [object] from [receptacle],',
    'put [object] in/on [receptacle], clean [object] with [sinkbasin], heat [object] with [microwave],',
    'cool [object] with [fridge], use [lamp], examine [object or receptacle], look, inventory.',
    'Rules: you carry one object at a time; closed receptacles must be opened before you can see or take what is',
    'inside or put something in; "put a clean/hot/cool X" means clean, heat or cool it first; to look at something',
    'under a lamp, hold it and use the lamp where the lamp is. Any receptacle of the named type will do.',
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

/** Compact: the feedback line and the admissible actions, one line each. */
export const compactAlfWorldObservation: CompactObservation = (text) =>
  text
    .split('\n')
    .map((line) => line.trim().replace(/^Admissible actions: /, 'can: '))
    .filter((line) => line.length > 0)
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
