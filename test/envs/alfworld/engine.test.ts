// The .tw-pddl engine on fixture games written for these tests. Expected texts are worked out by hand from TextWorld's
// and ALFWorld's rules as read in their code (microsoft/TextWorld textworld/envs/pddl: pddl.py, logic/__init__.py,
// textgen/__init__.py; alfworld/alfworld alfworld/agents/utils/misc.py), not taken from a run of TextWorld; operator
// counts and applicable operators are facts computed with Fast Downward's translator (aibasel/downward src/translate
// at 5ea8024, invariant synthesis off, unreachable facts kept) on the same files, simulated step by step
// (scripts/alfworld-fd-check.ts with scripts/py/alfworld_fd_reference.py). docs/alfworld.md lists what was checked.
import { describe, expect, it } from 'vitest';
import { demangleNames } from '../../../src/envs/alfworld/engine/demangle.js';
import { GameLogic, NOTHING_HAPPENS, TwPddlGame } from '../../../src/envs/alfworld/engine/game.js';
import { Grammar, dedent, parseSymbols, queryAssignments, type FactView } from '../../../src/envs/alfworld/engine/grammar.js';
import { parseDomain, tokenize } from '../../../src/envs/alfworld/engine/pddl.js';
import { GENERATED_DOMAIN, generatedGrammar } from '../../../src/envs/alfworld/engine/logic-text.js';
import { grammarVersion } from '../../../src/envs/alfworld/games/data.js';
import { replayGame } from '../../../src/envs/alfworld/games/check.js';
import { planOperators } from '../../../src/envs/alfworld/engine/planner.js';
import { projectAction } from '../../../src/envs/alfworld/parse.js';
import { BEDROOM_WALKTHROUGH, KITCHEN_WALKTHROUGH, bareDeskFile, bedroomFile, kitchenFile, kitchenGame } from './fixtures.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const step = (g: TwPddlGame, c: string) => g.step(c).feedback;

describe('alfworld engine: a walk through the fixture kitchen', () => {
  it('the intro lists every receptacle (sorted ids, so cabinet 2 before cabinet 1) and ends with the task', () => {
    const g = kitchenGame();
    expect(g.reset()).toBe(
      '-= Welcome to TextWorld, ALFRED! =-\n\nYou are in the middle of a room. Looking quickly around you, you see a cabinet 2, a cabinet 1, a countertop 1, ' +
        'a drawer 1, a microwave 1, and a sinkbasin 1.\n\nYour task is to: put a hot apple in cabinet.',
    );
    expect(g.admissible()).toEqual([
      'go to cabinet 1',
      'go to cabinet 2',
      'go to countertop 1',
      'go to drawer 1',
      'go to microwave 1',
      'go to sinkbasin 1',
      'help',
      'inventory',
      'look',
    ]);
  });

  it('each feedback text of a walk, and the admissible commands where the quirks show', () => {
    const g = kitchenGame();
    g.reset();
    expect(step(g, 'go to countertop 1')).toBe('You arrive at countertop 1. On the countertop 1, you see a apple 2, and a mug 1.');
    // Fast Downward: no go-to to the location one stands at (drawer 1 shares it), no examine of a visible object.
    expect(g.admissible()).toEqual([
      'examine countertop 1',
      'examine drawer 1',
      'go to cabinet 1',
      'go to cabinet 2',
      'go to microwave 1',
      'go to sinkbasin 1',
      'help',
      'inventory',
      'look',
      'open drawer 1',
      'take apple 2 from countertop 1',
      'take mug 1 from countertop 1',
    ]);
    expect(step(g, 'look')).toBe('You are facing the countertop 1, and drawer 1. Next to it, you see nothing.');
    expect(step(g, 'examine apple 2')).toBe(NOTHING_HAPPENS);
    expect(step(g, 'take mug 1 from countertop 1')).toBe('You pick up the mug 1 from the countertop 1.');
    expect(g.admissible()).toContain('examine mug 1');
    expect(g.admissible()).toContain('move mug 1 to countertop 1');
    expect(g.admissible()).not.toContain('move mug 1 to drawer 1'); // closed
    expect(step(g, 'examine mug 1')).toBe('This is a normal mug 1. In it, you see nothing.');
    expect(step(g, 'go to microwave 1')).toBe('You arrive at microwave 1. The microwave 1 is closed.');
    expect(step(g, 'heat mug 1 with microwave 1')).toBe('You heat the mug 1 using the microwave 1.');
    // The first rule whose condition holds: a hot mug is still "a normal mug" (isreceptacleobject comes first).
    expect(step(g, 'examine mug 1')).toBe('This is a normal mug 1. In it, you see nothing.');
    expect(step(g, 'open microwave 1')).toBe('You open the microwave 1. The microwave 1 is open. In it, you see nothing.');
    expect(step(g, 'move mug 1 to microwave 1')).toBe('You move the mug 1 to the microwave 1.');
    expect(step(g, 'examine microwave 1')).toBe('The microwave 1 is open. In it, you see a mug 1.');
    expect(step(g, 'close microwave 1')).toBe('You close the microwave 1.');
    expect(step(g, 'inventory')).toBe('You are not carrying anything.');
    expect(step(g, 'go to cabinet 2')).toBe('You arrive at cabinet 2. The cabinet 2 is closed.');
    expect(step(g, 'take apple 1 from cabinet 2')).toBe(NOTHING_HAPPENS);
    expect(step(g, 'open cabinet 2')).toBe('You open the cabinet 2. The cabinet 2 is open. In it, you see a apple 1.');
    expect(step(g, 'take apple 1 from cabinet 2')).toBe('You pick up the apple 1 from the cabinet 2.');
    expect(step(g, 'inventory')).toBe('You are carrying: a apple 1.');
    expect(step(g, 'examine apple 1')).toBe("There's nothing special about apple 1.");
    expect(step(g, 'go to countertop 1')).toBe('You arrive at countertop 1. On the countertop 1, you see a apple 2.');
    expect(step(g, 'move apple 1 to countertop 1')).toBe('You move the apple 1 to the countertop 1.');
    expect(step(g, 'examine countertop 1')).toBe('On the countertop 1, you see a apple 2, and a apple 1.');
    expect(step(g, 'dance')).toBe(NOTHING_HAPPENS);
    expect(g.won()).toBe(false);
  });

  it('the fact mirror keeps not_inreceptacle: an object moved between receptacles of one location is "next to it"', () => {
    const g = kitchenGame();
    g.reset();
    for (const c of ['go to countertop 1', 'take apple 2 from countertop 1', 'open drawer 1']) step(g, c);
    expect(step(g, 'move apple 2 to drawer 1')).toBe('You move the apple 2 to the drawer 1.');
    expect(step(g, 'examine drawer 1')).toBe('The drawer 1 is open. In it, you see a apple 2, and a egg 1.');
    expect(step(g, 'look')).toBe('You are facing the countertop 1, and drawer 1. Next to it, you see a apple 2.');
    expect(g.mirrorFacts()).toContain('not_inreceptacle(apple_bar__plus_00_dot_10, countertop_bar__plus_01_dot_00)');
    // Taken elsewhere, the object is no longer at this location (the pick-up deleted objectatlocation).
    step(g, 'take apple 2 from drawer 1');
    expect(step(g, 'look')).toBe('You are facing the countertop 1, and drawer 1. Next to it, you see nothing.');
  });

  it("the goal turns won exactly after the walkthrough's last command, with reward-relevant state on the true facts", () => {
    const g = kitchenGame();
    g.reset();
    KITCHEN_WALKTHROUGH.forEach((c, i) => {
      expect(g.admissible()).toContain(c);
      expect(step(g, c)).not.toBe(NOTHING_HAPPENS);
      expect(g.won()).toBe(i === KITCHEN_WALKTHROUGH.length - 1);
    });
  });

  it('help is a command of 2.1.2+ grammars; toggling always reads "You turn on" (istoggled never goes false)', () => {
    const g = new TwPddlGame(new GameLogic(bedroomFile(), 'fixture bedroom'));
    g.reset();
    expect(step(g, 'help')).toMatch(/^Commands:\n {2}look: /);
    for (const c of BEDROOM_WALKTHROUGH.slice(0, 4)) step(g, c);
    expect(g.won()).toBe(false);
    expect(step(g, 'use desklamp 1')).toBe('You turn on the desklamp 1.');
    expect(g.won()).toBe(true);
    expect(step(g, 'use desklamp 1')).toBe('You turn on the desklamp 1.');
    expect(step(g, 'look')).toBe('You are facing the desk 1. Next to it, you see nothing.');
  });
});

describe('alfworld engine: a game file of version 2.1.1 (another grammar, no help action)', () => {
  it('reads the texts from the file: `put X in/on Y`, `You arrive at loc N.`, no help', () => {
    // 2.1.1's grammar names the location where later versions name the receptacle, and puts rather than moves.
    const grammar = generatedGrammar('put a hot apple in cabinet')
      .replace('You arrive at {r.name}.', 'You arrive at {lend.name}.')
      .replace('template :: "move {o} to {r}";', 'template :: "put {o} in/on {r}";')
      .replace('You move the {o.name} to the {r.name}.', 'You put the {o.name} in/on the {r.name}.')
      .replace(/action help \{[\s\S]*$/, '');
    const domain = GENERATED_DOMAIN.replace(/\(:action help[\s\S]*?\(checked \?a\)\)\)\s*/, '');
    const file = { ...kitchenFile(), pddl_domain: domain, grammar };
    expect(grammarVersion(file.grammar)).toMatch(/^2\.1\.1 /);
    const g = new TwPddlGame(new GameLogic(file, 'kitchen 2.1.1'));
    g.reset();
    expect(g.admissible()).not.toContain('help');
    // The locations are demangled too: six loc ids, the countertop's is the fourth smallest, so loc 3.
    expect(step(g, 'go to countertop 1')).toBe('You arrive at loc 3. On the countertop 1, you see a apple 2, and a mug 1.');
    step(g, 'take apple 2 from countertop 1');
    expect(g.admissible()).toContain('put apple 2 in/on countertop 1');
    expect(step(g, 'put apple 2 in/on countertop 1')).toBe('You put the apple 2 in/on the countertop 1.');
    expect(step(g, 'help')).toBe(NOTHING_HAPPENS);
  });
});

describe('alfworld engine: a receptacle id without the `_bar_` suffix (demangled `desk `)', () => {
  // Every state the planner's walk reaches, and every command listed there, sent as listed and as LaMer's projection
  // sends it: each must act (never "Nothing happens.").
  it('every admissible command executes as listed, and the planner plays its own commands to a win', () => {
    const game = new TwPddlGame(new GameLogic(bareDeskFile(), 'bare desk'));
    game.reset();
    expect(game.logic.entities.get('desk')?.name).toBe('desk ');
    const ops = planOperators(game.logic.task, game.trueState());
    expect(ops).not.toBeNull();
    const played: string[] = [];
    const refused: string[] = [];
    for (let i = 0; i <= ops!.length; i++) {
      for (const command of game.admissible()) {
        for (const sent of [command, projectAction(`<action>${command}</action>`).command]) {
          const side = game.fork();
          const r = side.step(sent);
          if (!r.applied || r.feedback === NOTHING_HAPPENS) refused.push(`${JSON.stringify(sent)} after [${played.join(', ')}]`);
        }
      }
      expect(refused).toEqual([]);
      if (i === ops!.length) break;
      const command = game.commandOf(ops![i])!;
      expect(game.admissible()).toContain(command);
      played.push(command);
      expect(game.step(command).applied).toBe(true);
    }
    expect(played).toContain('go to desk');
    expect(game.won()).toBe(true);
  });
});

describe('alfworld engine against Fast Downward (facts computed with its translator)', () => {
  it('grounds as many operators: 106 in the kitchen, 35 in the bedroom', () => {
    expect(new GameLogic(kitchenFile(), 'k').task.operators.length).toBe(106);
    expect(new GameLogic(bedroomFile(), 'b').task.operators.length).toBe(35);
  });

  it('applicable operators at the countertop, before and after taking the mug', () => {
    const g = kitchenGame();
    g.reset();
    const names = () => [...new Set(g.logic.task.operators.filter((op) => g.commandOf(op) !== undefined).map((op) => op.name))].sort();
    step(g, 'go to countertop 1');
    const loc = 'loc_bar_3_bar_0_bar_0_bar_0';
    const common = [
      'examinereceptacle agent1 countertop_bar__plus_01_dot_00',
      'examinereceptacle agent1 drawer_bar__plus_01_dot_00',
      `gotolocation agent1 ${loc} loc_bar_1_bar_0_bar_0_bar_0 cabinet_bar__plus_01_dot_00`,
      `gotolocation agent1 ${loc} loc_bar_2_bar_0_bar_0_bar_0 cabinet_bar__plus_02_dot_00`,
      `gotolocation agent1 ${loc} loc_bar_4_bar_0_bar_0_bar_0 microwave_bar__plus_01_dot_00`,
      `gotolocation agent1 ${loc} loc_bar_5_bar_0_bar_0_bar_0 sink_bar__plus_01_dot_00_bar_sinkbasin`,
      'help agent1',
      'inventory agent1',
      `look agent1 ${loc}`,
      `openobject agent1 ${loc} drawer_bar__plus_01_dot_00`,
    ];
    expect(names()).toEqual(
      [
        ...common,
        `pickupobject agent1 ${loc} apple_bar__plus_00_dot_10 countertop_bar__plus_01_dot_00`,
        `pickupobject agent1 ${loc} mug_bar__plus_00_dot_30 countertop_bar__plus_01_dot_00`,
      ].sort(),
    );
    step(g, 'take mug 1 from countertop 1');
    expect(names()).toEqual(
      [
        'examineobject agent1 mug_bar__plus_00_dot_30',
        ...common,
        `putobject agent1 ${loc} mug_bar__plus_00_dot_30 countertop_bar__plus_01_dot_00 mugtype countertoptype`,
      ].sort(),
    );
  });
});

describe('alfworld engine pieces', () => {
  it("Fast Downward's tokenizer: `?l - location,` types ?l as `location,`; comments and case go", () => {
    expect(tokenize('(exists (?l - location, ?r - receptacle) ; note\n (AtLocation ?a ?l))')).toEqual([
      '(',
      'exists',
      '(',
      '?l',
      '-',
      'location,',
      '?r',
      '-',
      'receptacle',
      ')',
      '(',
      'atlocation',
      '?a',
      '?l',
      ')',
      ')',
    ]);
    const examine = parseDomain(GENERATED_DOMAIN).actions.find((a) => a.name === 'examineobject')!;
    expect(JSON.stringify(examine.precondition)).toContain('"type":"location,"');
  });

  it("ALFWorld's demangler: the smallest id gets the largest number; basins; ids without _bar_ keep a trailing space", () => {
    // Expected names computed by running ALFWorld's Demangler (alfworld/agents/utils/misc.py) on these ids.
    const ids = [
      'agent1',
      'appletype',
      'loc_bar__minus_3_bar__minus_6_bar_3_bar_60',
      'loc_bar_1_bar_2_bar_0_bar_45',
      'cabinet_bar__plus_01_dot_00',
      'cabinet_bar__minus_00_dot_50',
      'cabinet_bar__plus_00_dot_20',
      'sink_bar__plus_00_dot_71_bar__plus_00_dot_82_bar__minus_01_dot_77',
      'sink_bar__plus_00_dot_71_bar__plus_00_dot_82_bar__minus_01_dot_77_bar_sinkbasin',
      'apple_bar__minus_00_dot_48',
      'apple_bar__plus_01_dot_02',
      'pen_bar__plus_00_dot_10',
      'pencil_bar__plus_00_dot_05',
    ];
    const names = demangleNames(ids);
    expect(ids.map((id) => names.get(id))).toEqual([
      'agent1 ',
      'appletype ',
      'loc 1',
      'loc 2',
      'cabinet 1',
      'cabinet 3',
      'cabinet 2',
      'sink 1',
      'sinkbasin 1',
      'apple 2',
      'apple 1',
      'pen 1',
      'pencil 1',
    ]);
  });

  it('lists: nothing, one item, `a, and b`, `a, b, and c`', () => {
    const grammar = new Grammar(
      `grammar :: """{"l": [{"rhs": "[{o.name | item(o:thing)}]"}], "list_empty": [{"rhs": "nothing"}], "list_separator": [{"rhs": ", "}], "list_last_separator": [{"rhs": ", and "}]}""";`,
    );
    const view = (items: string[]): FactView => ({
      facts: (p) => (p === 'item' ? items.map((i) => [i]) : []),
      typeOf: () => 'thing',
      children: () => [],
      hasType: () => true,
      entity: (id) => ({ id, type: 'thing', name: id.toUpperCase(), definite: 'the', indefinite: 'a' }),
    });
    const say = (items: string[]) => grammar.derive('#l#', { variables: new Map(), mapping: new Map() }, view(items));
    expect([say([]), say(['a']), say(['a', 'b']), say(['a', 'b', 'c'])]).toEqual(['nothing', 'A', 'A, and B', 'A, B, and C']);
  });

  it('queries are injective: two placeholders never take the same object', () => {
    const facts: Record<string, string[][]> = {
      in: [
        ['x', 'box'],
        ['y', 'box'],
      ],
    };
    const view: FactView = {
      facts: (p) => facts[p] ?? [],
      typeOf: (id) => (id === 'box' ? 'r' : 'o'),
      children: () => [],
      hasType: () => true,
      entity: (id) => ({ id, type: 'o', name: id, definite: 'the', indefinite: 'a' }),
    };
    const pairs = queryAssignments(view, 'in(a:o, r:r) & in(b:o, r:r)', new Map(), 'test').map((m) => `${m.get('a:o')!.name}${m.get('b:o')!.name}`);
    expect(pairs).toEqual(['xy', 'yx']);
    // A bound placeholder's object is used: `a` bound to x leaves only y for b.
    const bound = queryAssignments(view, 'in(b:o, r:r)', new Map([['a:o', { name: 'x', type: 'o' }]]), 'test').map((m) => m.get('b:o')!.name);
    expect(bound).toEqual(['y']);
  });

  it('the .twl2 document: dedented blocks, `#` lines dropped in action grammars, later keys win, tabs between symbols skipped, unreadable tails dropped', () => {
    expect(dedent('\n    a\n      b\n')).toBe('\na\n  b\n');
    const g = new Grammar(
      [
        'grammar :: """',
        '    {"x": [{"rhs": "first"}], "y": [{"rhs": "kept"}]}',
        '""";',
        '# a comment between parts',
        'action noop {',
        '  template :: "noop";',
        '  feedback :: "#x#";',
        '  grammar :: """',
        '    {',
        '      # this line is not JSON',
        '      "x": [{"rhs": "second\\t#y#\\t#y#"}],',
        '      "z": [{"rhs": "{o.name} (in/on the {r.name})}"}]',
        '    }',
        '  """;',
        '}',
      ].join('\n'),
    );
    const ctx = { variables: new Map(), mapping: new Map() };
    const view: FactView = {
      facts: () => [],
      typeOf: () => 'o',
      children: () => [],
      hasType: () => true,
      entity: (id) => ({ id, type: 'o', name: id, definite: 'the', indefinite: 'a' }),
    };
    // A tab inside literal text stays; tabs before a symbol are skipped.
    expect(g.derive('#x# #y#', ctx, view)).toBe('second\tkeptkept kept');
    expect(g.actions.get('noop')).toEqual({ name: 'noop', template: 'noop', feedback: '#x#' });
    // `overview(o, r)` of ALFWorld's grammar ends with a stray `}`: the `)` before it is still text, the `}` is dropped.
    const symbols = parseSymbols('{o.name} (in/on the {r.name})}');
    expect(symbols.map((s) => s.kind)).toEqual(['conditional', 'terminal', 'conditional', 'terminal']);
    expect(symbols[3]).toEqual({ kind: 'terminal', text: ')' });
  });

  it('a walkthrough replay checks admissibility, feedback and the goal turning true at the last step only', () => {
    const dir = mkdtempSync(join(tmpdir(), 'alfworld-replay-'));
    const write = (name: string, walkthrough: string[] | null) => {
      const file = join(dir, `${name}.tw-pddl`);
      writeFileSync(file, JSON.stringify(kitchenFile(walkthrough)));
      return replayGame(file, name, null);
    };
    expect(write('good', KITCHEN_WALKTHROUGH)).toMatchObject({ ok: true, steps: 6 });
    expect(write('short', KITCHEN_WALKTHROUGH.slice(0, 5))).toMatchObject({ ok: false, problem: 'the goal does not hold after the last step (5)' });
    expect(write('long', [...KITCHEN_WALKTHROUGH, 'look'])).toMatchObject({ ok: false, problem: 'the goal holds after step 6 of 7' });
    expect(write('bad', ['go to countertop 1', 'examine apple 2'])).toMatchObject({ ok: false, steps: 1 });
    expect(write('none', null)).toMatchObject({ ok: false, problem: 'the game file has no walkthrough' });
  });
});
