// lamer's own households written as ALFWorld game files: the project's domain and grammar (engine/logic-text.ts) with a
// problem of ALFWorld's shape (agent1, `Name_bar_...` object ids, `loc_bar_...` locations, `...Type` constants,
// receptacleAtLocation / inReceptacle / objectAtLocation / canContain facts and a goal formula), a walkthrough from
// the planner, and a traj_data.json with the task type. The ids are chosen so that ALFWorld's demangler names them as
// the household does (`cabinet 3`): within a name, the instance numbered k of n gets the (n - k)-th smallest id.

import { LamerError } from '../../../errors.js';
import { GameLogic, TwPddlGame, type GameFile } from '../engine/game.js';
import { GENERATED_DOMAIN, generatedGrammar } from '../engine/logic-text.js';
import { planOperators } from '../engine/planner.js';
import { goalPddl, goalText, type TaskType } from './tasks.js';
import { CLEANABLE, COOLABLE, HEATABLE, LAMP_TYPES, type Household } from './world.js';

/** ALFWorld's spelling of each type the generator uses (ids and `...Type` constants). */
const CAMEL: Record<string, string> = {
  alarmclock: 'AlarmClock',
  apple: 'Apple',
  armchair: 'ArmChair',
  bathtubbasin: 'BathtubBasin',
  bed: 'Bed',
  book: 'Book',
  bowl: 'Bowl',
  box: 'Box',
  bread: 'Bread',
  butterknife: 'ButterKnife',
  cabinet: 'Cabinet',
  candle: 'Candle',
  cd: 'CD',
  cellphone: 'CellPhone',
  cloth: 'Cloth',
  coffeetable: 'CoffeeTable',
  countertop: 'CounterTop',
  creditcard: 'CreditCard',
  cup: 'Cup',
  desk: 'Desk',
  desklamp: 'DeskLamp',
  diningtable: 'DiningTable',
  dishsponge: 'DishSponge',
  drawer: 'Drawer',
  dresser: 'Dresser',
  egg: 'Egg',
  fork: 'Fork',
  fridge: 'Fridge',
  garbagecan: 'GarbageCan',
  kettle: 'Kettle',
  keychain: 'KeyChain',
  knife: 'Knife',
  ladle: 'Ladle',
  laptop: 'Laptop',
  lettuce: 'Lettuce',
  microwave: 'Microwave',
  mug: 'Mug',
  newspaper: 'Newspaper',
  pan: 'Pan',
  pen: 'Pen',
  pencil: 'Pencil',
  peppershaker: 'PepperShaker',
  pillow: 'Pillow',
  plate: 'Plate',
  pot: 'Pot',
  potato: 'Potato',
  remotecontrol: 'RemoteControl',
  safe: 'Safe',
  saltshaker: 'SaltShaker',
  shelf: 'Shelf',
  sidetable: 'SideTable',
  sinkbasin: 'SinkBasin',
  soapbar: 'SoapBar',
  soapbottle: 'SoapBottle',
  sofa: 'Sofa',
  spatula: 'Spatula',
  spoon: 'Spoon',
  spraybottle: 'SprayBottle',
  statue: 'Statue',
  stoveburner: 'StoveBurner',
  tissuebox: 'TissueBox',
  toilet: 'Toilet',
  toiletpaper: 'ToiletPaper',
  tomato: 'Tomato',
  towelholder: 'TowelHolder',
  tvstand: 'TVStand',
  vase: 'Vase',
  watch: 'Watch',
  winebottle: 'WineBottle',
};

/** Types whose objects hold other objects (ALFWorld's movable receptacles): examining one lists its contents. */
const RECEPTACLE_OBJECTS = new Set(['bowl', 'box', 'cup', 'mug', 'pan', 'plate', 'pot']);
const SLICEABLE = new Set(['apple', 'bread', 'lettuce', 'potato', 'tomato']);
/** Constants the domain's preconditions name: every problem declares them, as ALFWorld's do. */
const DOMAIN_CONSTANTS: Array<[string, 'otype' | 'rtype']> = [
  ['SinkBasinType', 'rtype'],
  ['MicrowaveType', 'rtype'],
  ['FridgeType', 'rtype'],
  ['KnifeType', 'otype'],
  ['ButterKnifeType', 'otype'],
];

function camel(type: string): string {
  const c = CAMEL[type];
  if (c === undefined) throw new LamerError('E_ENV', `alfworld generator: no ALFWorld spelling for the type ${type}`);
  return c;
}

const pad2 = (n: number) => String(n).padStart(2, '0');

/** The PDDL id of `type k` among n of its name: the (n - k)-th smallest, so the demangler numbers it k. */
function idOf(type: string, k: number, n: number): string {
  const coord = `_bar__plus_${pad2(n - k)}_dot_00_bar__plus_00_dot_00_bar__plus_00_dot_00`;
  // Basins are ALFWorld's `Sink|...|SinkBasin` objects: the demangler names them by the text before the first bar
  // plus "basin".
  if (type === 'sinkbasin') return `Sink${coord}_bar_SinkBasin`;
  if (type === 'bathtubbasin') return `Bathtub${coord}_bar_BathtubBasin`;
  return `${camel(type)}${coord}`;
}

function splitName(id: string): [string, number] {
  const cut = id.lastIndexOf(' ');
  return [id.slice(0, cut), Number(id.slice(cut + 1))];
}

/** The problem file of a household (its content: a game is its problem, docs/spec.md §11). */
export function householdProblem(house: Household): string {
  const count = new Map<string, number>();
  for (const x of [...house.receptacles, ...house.things]) count.set(x.type, (count.get(x.type) ?? 0) + 1);
  const pid = (id: string) => {
    const [type, k] = splitName(id);
    return idOf(type, k, count.get(type)!);
  };
  const loc = (i: number) => `loc_bar_${i}_bar_0_bar_0_bar_0`;
  const objectTypes = [...new Set(house.things.map((t) => t.type))].sort();
  const receptacleTypes = [...new Set(house.receptacles.map((r) => r.type))].sort();
  const typeDecls = new Map<string, string>();
  for (const t of objectTypes) typeDecls.set(`${camel(t)}Type`, 'otype');
  for (const t of receptacleTypes) typeDecls.set(`${camel(t)}Type`, 'rtype');
  for (const [c, kind] of DOMAIN_CONSTANTS) if (!typeDecls.has(c)) typeDecls.set(c, kind);

  const objects = ['agent1 - agent', loc(0) + ' - location'];
  house.receptacles.forEach((_, i) => objects.push(`${loc(i + 1)} - location`));
  for (const r of house.receptacles) objects.push(`${pid(r.id)} - receptacle`);
  for (const t of house.things) objects.push(`${pid(t.id)} - object`);
  for (const [c, kind] of typeDecls) objects.push(`${c} - ${kind}`);

  const init = [`(atLocation agent1 ${loc(0)})`];
  const where = new Map<string, number>();
  house.receptacles.forEach((r, i) => {
    where.set(r.id, i + 1);
    init.push(`(receptacleAtLocation ${pid(r.id)} ${loc(i + 1)})`, `(receptacleType ${pid(r.id)} ${camel(r.type)}Type)`);
    if (r.openable) init.push(`(openable ${pid(r.id)})`);
  });
  for (const t of house.things) {
    const id = pid(t.id);
    init.push(`(objectType ${id} ${camel(t.type)}Type)`);
    if (t.takeable) init.push(`(pickupable ${id})`);
    if (LAMP_TYPES.has(t.type)) init.push(`(toggleable ${id})`);
    if (RECEPTACLE_OBJECTS.has(t.type)) init.push(`(isReceptacleObject ${id})`);
    if (CLEANABLE.has(t.type)) init.push(`(cleanable ${id})`);
    if (HEATABLE.has(t.type)) init.push(`(heatable ${id})`);
    if (COOLABLE.has(t.type)) init.push(`(coolable ${id})`);
    if (SLICEABLE.has(t.type)) init.push(`(sliceable ${id})`);
  }
  for (const r of house.receptacles) {
    for (const thing of house.contents[r.id] ?? [])
      init.push(`(inReceptacle ${pid(thing)} ${pid(r.id)})`, `(objectAtLocation ${pid(thing)} ${loc(where.get(r.id)!)})`);
  }
  for (const rt of receptacleTypes) {
    for (const ot of objectTypes) if (!LAMP_TYPES.has(ot)) init.push(`(canContain ${camel(rt)}Type ${camel(ot)}Type)`);
  }
  const task = house.task;
  const goal = goalPddl(
    task.type,
    `${camel(task.objectType)}Type`,
    task.receptacleType ? `${camel(task.receptacleType)}Type` : '',
    task.lampType ? `${camel(task.lampType)}Type` : '',
  );
  return [
    '(define (problem lamer_household)',
    '  (:domain alfred)',
    '  (:objects',
    ...objects.map((o) => `    ${o}`),
    '  )',
    '  (:init',
    ...init.map((f) => `    ${f}`),
    '  )',
    `  (:goal (and ${goal}))`,
    ')',
    '',
  ].join('\n');
}

/** The traj_data.json fields ALFWorld's loader reads, for a household. */
export function householdTrajData(house: Household): { task_type: TaskType; pddl_params: Record<string, string | boolean> } {
  const t = house.task;
  return {
    task_type: t.type,
    pddl_params: {
      object_target: camel(t.objectType),
      parent_target: t.receptacleType ? camel(t.receptacleType) : '',
      mrecep_target: '',
      toggle_target: t.lampType ? camel(t.lampType) : '',
      object_sliced: false,
    },
  };
}

/** A household as a game file, without walkthrough (the planner writes one with `withWalkthrough`). */
export function householdGame(house: Household, problem = householdProblem(house)): GameFile {
  return {
    pddl_domain: GENERATED_DOMAIN,
    pddl_problem: problem,
    grammar: generatedGrammar(goalText(house.task, house.goalVariant)),
    solvable: true,
    walkthrough: null,
  };
}

/** The game file with the planner's plan from the initial state as its walkthrough (throws when none is found). */
export function withWalkthrough(logic: GameLogic): GameFile {
  const game = new TwPddlGame(logic);
  const plan = planOperators(logic.task, game.trueState());
  if (plan === null) throw new LamerError('E_ENV', `${logic.where}: the planner found no plan from the initial state`);
  const walkthrough: string[] = [];
  for (const op of plan) {
    const command = game.commandOf(op);
    if (command === undefined) throw new LamerError('E_ENV', `${logic.where}: planned operator ${op.name} is not admissible`);
    walkthrough.push(command);
    game.step(command);
  }
  return { ...logic.file, walkthrough };
}
