// ALFWorld's object names (AlfredDemangler over its Demangler, without shuffling): the ids sorted, counted per name
// (the part before the first `_bar_`, plus `basin` when the id holds `basin`), and each id in sorted order takes the
// last remaining number of its name, so the smallest id gets the largest number. An id without `_bar_` keeps its
// whole text and no number, and renders with a trailing space (`agent1 `). Read from alfworld/alfworld
// (alfworld/agents/utils/misc.py, Demangler; AlfredDemangler in alfworld/agents/environment/alfred_tw_env.py) and
// compared with that class run on the same ids by scripts/alfworld-upstream-check.ts.

import { LamerError } from '../../../errors.js';

/** Display names of lowercased ids. */
export function demangleNames(ids: Iterable<string>): Map<string, string> {
  const sorted = [...new Set(ids)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const counts = new Map<string, number>();
  for (const id of sorted) {
    const cut = id.indexOf('_bar_');
    if (cut < 0) continue;
    const name = id.slice(0, cut) + (id.includes('basin') ? 'basin' : '');
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  const names = new Map<string, string>();
  for (const id of sorted) {
    const text = id.replaceAll('_bar_', '|').replaceAll('_minus_', '-').replaceAll('_plus_', '+').replaceAll('_dot_', '.').replaceAll('_comma_', ',');
    const bar = text.indexOf('|');
    if (bar < 0) {
      names.set(id, `${text} `);
      continue;
    }
    const name = text.slice(0, bar) + (id.includes('basin') ? 'basin' : '');
    const left = counts.get(name);
    if (left === undefined)
      throw new LamerError('E_ENV', `object id ${id}: its name ${name} differs from the text before its first _bar_, which ALFWorld's demangler cannot number`);
    counts.set(name, left - 1);
    names.set(id, `${name} ${left}`);
  }
  return names;
}
