// The domain and grammar that lamer's own generated games carry, written for this project in the languages of
// ALFWorld's game files (PDDL for Fast Downward, TextWorld's .twl2) after ALFWorld's alfworld/data/alfred.pddl and
// alfred.twl2: texts of game-file version 2.1.2 and later (`move X to Y`, `You arrive at {receptacle}.`, a `help`
// command). scripts/alfworld-upstream-check.ts plays generated games under both (this pair and ALFWorld's) and
// compares the intro, admissible commands (but `help`), feedback and goal along a walk. Two things are
// kept on purpose because ALFWorld's files have them and they decide what is admissible: `examineObject` lists its
// `exists` variables with a comma (`?l - location, ?r - receptacle`), which the translator reads as the empty type
// `location,` (an object can only be examined while held), and `GotoLocation` to the current location has no effect.
// The help text is the project's own wording.

/** Marks the grammar of generated games in recorded runs (config.json's `grammarVersion`). */
export const GENERATED_GRAMMAR_VERSION = 'lamer-2.1.2';

export const GENERATED_DOMAIN = `(define (domain alfred)
  (:requirements :adl :action-costs :typing)
  (:types agent location receptacle object rtype otype)
  (:predicates
    (atLocation ?a - agent ?l - location)
    (receptacleAtLocation ?r - receptacle ?l - location)
    (objectAtLocation ?o - object ?l - location)
    (openable ?r - receptacle)
    (opened ?r - receptacle)
    (inReceptacle ?o - object ?r - receptacle)
    (isReceptacleObject ?o - object)
    (inReceptacleObject ?inner - object ?outer - object)
    (checked ?r - receptacle)
    (receptacleType ?r - receptacle ?t - rtype)
    (canContain ?rt - rtype ?ot - otype)
    (objectType ?o - object ?t - otype)
    (holds ?a - agent ?o - object)
    (holdsAny ?a - agent)
    (isClean ?o - object)
    (cleanable ?o - object)
    (isHot ?o - object)
    (heatable ?o - object)
    (isCool ?o - object)
    (coolable ?o - object)
    (pickupable ?o - object)
    (toggleable ?o - object)
    (isOn ?o - object)
    (isToggled ?o - object)
    (sliceable ?o - object)
    (isSliced ?o - object))
  (:functions (total-cost) - number)

  (:action look
    :parameters (?a - agent ?l - location)
    :precondition (and (atLocation ?a ?l))
    :effect (and (checked ?l)))

  (:action inventory
    :parameters (?a - agent)
    :precondition ()
    :effect (and (checked ?a)))

  (:action examineReceptacle
    :parameters (?a - agent ?r - receptacle)
    :precondition (exists (?l - location) (and (atLocation ?a ?l) (receptacleAtLocation ?r ?l)))
    :effect (and (checked ?r)))

  (:action examineObject
    :parameters (?a - agent ?o - object)
    :precondition (or
      (exists (?l - location, ?r - receptacle)
        (and (atLocation ?a ?l) (receptacleAtLocation ?r ?l) (inReceptacle ?o ?r) (or (not (openable ?r)) (opened ?r))))
      (holds ?a ?o))
    :effect (and (checked ?o)))

  (:action GotoLocation
    :parameters (?a - agent ?lStart - location ?lEnd - location ?r - receptacle)
    :precondition (and (atLocation ?a ?lStart) (receptacleAtLocation ?r ?lEnd))
    :effect (and (not (atLocation ?a ?lStart)) (atLocation ?a ?lEnd) (increase (total-cost) 1)))

  (:action OpenObject
    :parameters (?a - agent ?l - location ?r - receptacle)
    :precondition (and (openable ?r) (atLocation ?a ?l) (receptacleAtLocation ?r ?l) (not (opened ?r)))
    :effect (and (opened ?r) (checked ?r) (increase (total-cost) 1)))

  (:action CloseObject
    :parameters (?a - agent ?l - location ?r - receptacle)
    :precondition (and (openable ?r) (atLocation ?a ?l) (receptacleAtLocation ?r ?l) (opened ?r))
    :effect (and (not (opened ?r)) (increase (total-cost) 1)))

  (:action PickupObject
    :parameters (?a - agent ?l - location ?o - object ?r - receptacle)
    :precondition (and (pickupable ?o) (atLocation ?a ?l) (receptacleAtLocation ?r ?l) (inReceptacle ?o ?r)
      (not (holdsAny ?a)) (or (not (openable ?r)) (opened ?r)))
    :effect (and (not (inReceptacle ?o ?r)) (holds ?a ?o) (holdsAny ?a) (not (objectAtLocation ?o ?l))
      (increase (total-cost) 1)))

  (:action PutObject
    :parameters (?a - agent ?l - location ?o - object ?r - receptacle ?ot - otype ?rt - rtype)
    :precondition (and (holds ?a ?o) (atLocation ?a ?l) (receptacleAtLocation ?r ?l) (or (not (openable ?r)) (opened ?r))
      (objectType ?o ?ot) (receptacleType ?r ?rt) (canContain ?rt ?ot))
    :effect (and (inReceptacle ?o ?r) (objectAtLocation ?o ?l) (not (holds ?a ?o)) (not (holdsAny ?a))
      (increase (total-cost) 1)))

  (:action CleanObject
    :parameters (?a - agent ?l - location ?r - receptacle ?o - object)
    :precondition (and (cleanable ?o) (or (receptacleType ?r SinkBasinType)) (atLocation ?a ?l) (receptacleAtLocation ?r ?l)
      (holds ?a ?o))
    :effect (and (increase (total-cost) 5) (isClean ?o)))

  (:action HeatObject
    :parameters (?a - agent ?l - location ?r - receptacle ?o - object)
    :precondition (and (heatable ?o) (or (receptacleType ?r MicrowaveType)) (atLocation ?a ?l) (receptacleAtLocation ?r ?l)
      (holds ?a ?o))
    :effect (and (increase (total-cost) 5) (isHot ?o) (not (isCool ?o))))

  (:action CoolObject
    :parameters (?a - agent ?l - location ?r - receptacle ?o - object)
    :precondition (and (coolable ?o) (or (receptacleType ?r FridgeType)) (atLocation ?a ?l) (receptacleAtLocation ?r ?l)
      (holds ?a ?o))
    :effect (and (increase (total-cost) 5) (isCool ?o) (not (isHot ?o))))

  (:action ToggleObject
    :parameters (?a - agent ?l - location ?o - object ?r - receptacle)
    :precondition (and (toggleable ?o) (atLocation ?a ?l) (receptacleAtLocation ?r ?l) (inReceptacle ?o ?r))
    :effect (and (increase (total-cost) 5) (when (isOn ?o) (not (isOn ?o))) (when (not (isOn ?o)) (isOn ?o))
      (isToggled ?o)))

  (:action SliceObject
    :parameters (?a - agent ?l - location ?co - object ?ko - object)
    :precondition (and (sliceable ?co) (or (objectType ?ko KnifeType) (objectType ?ko ButterKnifeType))
      (atLocation ?a ?l) (objectAtLocation ?co ?l) (holds ?a ?ko))
    :effect (and (increase (total-cost) 5) (isSliced ?co)))

  (:action help
    :parameters (?a - agent)
    :precondition ()
    :effect (and (checked ?a)))
)
`;

const HELP_TEXT = [
  'Commands:',
  '  look: describe where you are',
  '  inventory: say what you carry',
  '  go to RECEPTACLE: walk to a receptacle',
  '  open RECEPTACLE / close RECEPTACLE',
  '  take OBJECT from RECEPTACLE',
  '  move OBJECT to RECEPTACLE: put what you carry in or on a receptacle',
  '  examine RECEPTACLE / examine OBJECT (an object you carry)',
  '  use OBJECT: switch a lamp',
  '  heat OBJECT with RECEPTACLE / clean OBJECT with RECEPTACLE / cool OBJECT with RECEPTACLE',
  '  slice OBJECT with OBJECT',
].join('\n');

/** The grammar of generated games, with `goal` as the text after "Your task is to: " (without the final period). */
export function generatedGrammar(goal: string): string {
  const rules = {
    intro: [{ rhs: '-= Welcome to TextWorld, ALFRED! =-\n\n#look.feedback#\n\n#task#' }],
    task: [{ rhs: `Your task is to: ${goal}.` }],
    'GotoLocation.feedback': [{ rhs: 'You arrive at {r.name}. #examineReceptacle.feedback#' }],
    'OpenObject.feedback': [{ rhs: 'You open the {r.name}. #examineReceptacle.feedback#' }],
    'CloseObject.feedback': [{ rhs: 'You close the {r.name}.' }],
    'PickupObject.feedback': [{ rhs: 'You pick up the {o.name} from the {r.name}.' }],
    'PutObject.feedback': [{ rhs: 'You move the {o.name} to the {r.name}.' }],
    'inventory.feedback': [
      { condition: 'holdsany(a:agent)', rhs: "You are carrying: [{o.indefinite + ' ' + o.name | holds(a:agent, o:object)}]." },
      { rhs: 'You are not carrying anything.' },
    ],
    'examineReceptacle.feedback': [
      {
        condition: 'openable(r:receptacle) & opened(r:receptacle)',
        rhs: "The {r.name} is open. In it, you see [{o.indefinite + ' ' + o.name | inreceptacle(o:object, r:receptacle)}].",
      },
      { condition: 'openable(r:receptacle)', rhs: 'The {r.name} is closed.' },
      { rhs: "On the {r.name}, you see [{o.indefinite + ' ' + o.name | inreceptacle(o:object, r:receptacle)}]." },
    ],
    'examineObject.feedback': [
      {
        condition: 'isreceptacleobject(o:object)',
        rhs: "This is a normal {o.name}. In it, you see [{o2.indefinite + ' ' + o2.name | inreceptacleobject(o2:object, o:object)}].",
      },
      { condition: 'isclean(o:object) & ishot(o:object) & issliced(o:object)', rhs: 'This is a hot and clean sliced {o.name}.' },
      { condition: 'isclean(o:object) & iscool(o:object) & issliced(o:object)', rhs: 'This is a cool and clean sliced {o.name}.' },
      { condition: 'isclean(o:object) & issliced(o:object)', rhs: 'This is a clean sliced {o.name}.' },
      { condition: 'ishot(o:object) & issliced(o:object)', rhs: 'This is a hot sliced {o.name}.' },
      { condition: 'iscool(o:object) & issliced(o:object)', rhs: 'This is a cool sliced {o.name}.' },
      { condition: 'isclean(o:object) & ishot(o:object)', rhs: 'This is a hot and clean {o.name}.' },
      { condition: 'isclean(o:object) & iscool(o:object)', rhs: 'This is a cool and clean {o.name}.' },
      { condition: 'ishot(o:object)', rhs: 'This is a hot {o.name}.' },
      { condition: 'isclean(o:object)', rhs: 'This is a clean {o.name}.' },
      { condition: 'iscool(o:object)', rhs: 'This is a cold {o.name}.' },
      { condition: 'toggleable(o:object) & istoggled(o:object)', rhs: 'This {o.name} is on.' },
      { condition: 'toggleable(o:object) & not_istoggled(o:object)', rhs: 'This {o.name} is off.' },
      { condition: 'sliceable(o:object) & issliced(o:object)', rhs: 'This is a sliced {o.name}.' },
      { rhs: "There's nothing special about {o.name}." },
    ],
  };
  const actionGrammar = (name: string, body: object) => `  grammar :: """\n${JSON.stringify(body, null, 2).replace(/^/gm, '    ')}\n  """;\n`;
  const action = (name: string, template: string, feedback: string, body?: object) =>
    `action ${name} {\n  template :: "${template}";\n  feedback :: "${feedback}";\n${body ? actionGrammar(name, body) : ''}}\n`;
  return [
    `grammar :: """\n${JSON.stringify(rules, null, 2)}\n""";\n`,
    action('GotoLocation', 'go to [{r.name | receptacleatlocation(r:receptacle, lend:location)}]', '#GotoLocation.feedback#'),
    action('OpenObject', 'open {r}', '#OpenObject.feedback#'),
    action('CloseObject', 'close {r}', '#CloseObject.feedback#'),
    action('PickupObject', 'take {o} from {r}', '#PickupObject.feedback#'),
    action('PutObject', 'move {o} to {r}', '#PutObject.feedback#'),
    action('inventory', 'inventory', '#inventory.feedback#'),
    action('examineReceptacle', 'examine {r}', '#examineReceptacle.feedback#'),
    action('examineObject', 'examine {o}', '#examineObject.feedback#'),
    action('ToggleObject', 'use {o}', '#toggleObject.feedback#', {
      'toggleObject.feedback': [
        { condition: 'toggleable(o:object) & istoggled(o:object)', rhs: 'You turn on the {o.name}.' },
        { condition: 'toggleable(o:object)', rhs: 'You turn off the {o.name}.' },
        { rhs: "You don't see any switch on the {o.name}." },
      ],
    }),
    action('HeatObject', 'heat {o} with {r}', '#heatObject.feedback#', { 'heatObject.feedback': [{ rhs: 'You heat the {o.name} using the {r.name}.' }] }),
    action('CleanObject', 'clean {o} with {r}', '#cleanObject.feedback#', { 'cleanObject.feedback': [{ rhs: 'You clean the {o.name} using the {r.name}.' }] }),
    action('CoolObject', 'cool {o} with {r}', '#coolObject.feedback#', { 'coolObject.feedback': [{ rhs: 'You cool the {o.name} using the {r.name}.' }] }),
    action('SliceObject', 'slice {co} with {ko}', '#sliceObject.feedback#', {
      'sliceObject.feedback': [{ rhs: 'You sliced the {co.name} with the {ko.name}.' }],
    }),
    action('look', 'look', '#look.feedback#', {
      'look.feedback': [
        {
          condition: 'atlocation(a:agent, l:location) & receptacleatlocation(r:receptacle, l:location)',
          rhs: '#look-variations#. Next to it, you see #list_objects_on_the_floor#.',
        },
        { rhs: 'You are in the middle of a room. Looking quickly around you, you see #list_appliances#.' },
      ],
      'look-variations': [{ rhs: 'You are facing the [{r.name | atlocation(a:agent, l:location) & receptacleatlocation(r:receptacle, l:location)}]' }],
      list_objects_on_the_floor: [
        {
          condition:
            'atlocation(a:agent, l:location) & objectatlocation(o:object, l:location) & receptacleatlocation(r:receptacle, l:location) & not_inreceptacle(o:object, r:receptacle)',
          rhs: '[{#overview(o)# | atlocation(a:agent, l:location) & objectatlocation(o:object, l:location) & receptacleatlocation(r:receptacle, l:location) & not_inreceptacle(o:object, r:receptacle)}]',
        },
        { rhs: 'nothing' },
      ],
      list_appliances: [
        { condition: 'receptacleatlocation(r:receptacle, l:location)', rhs: '[{#overview(r)# | receptacleatlocation(r:receptacle, l:location)}]' },
        { rhs: 'nothing' },
      ],
      'overview(o)': [{ rhs: '{o.indefinite} {o.name}' }],
      'overview(r)': [{ rhs: '{r.indefinite} {r.name or r.id}' }],
      list_empty: [{ rhs: 'nothing' }],
      list_separator: [{ rhs: ', ' }],
      list_last_separator: [{ rhs: ', and ' }],
    }),
    action('help', 'help', '#help.feedback#', { 'help.feedback': [{ rhs: HELP_TEXT }] }),
  ].join('\n');
}
