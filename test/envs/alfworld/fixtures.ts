// Fixture games written for these tests in ALFWorld's game-file format: the project's domain and grammar
// (src/envs/alfworld/engine/logic-text.ts) with hand-written problems of ALFWorld's shape.
import { GameLogic, TwPddlGame, type GameFile } from '../../../src/envs/alfworld/engine/game.js';
import { GENERATED_DOMAIN, generatedGrammar } from '../../../src/envs/alfworld/engine/logic-text.js';

const CONSTANTS = ['FridgeType - rtype', 'KnifeType - otype', 'ButterKnifeType - otype'];

/**
 * A kitchen: cabinet 2 (openable, holds apple 1), cabinet 1, countertop 1 (apple 2, mug 1) and drawer 1 (openable,
 * egg 1) at one location, microwave 1 (openable), sinkbasin 1. The agent starts where no receptacle is. Ids are
 * chosen so the demangler's numbering shows: the smaller cabinet id is cabinet 2.
 */
export const KITCHEN_PROBLEM = `(define (problem fixture_kitchen)
  (:domain alfred)
  (:objects
    agent1 - agent
    loc_bar_0_bar_0_bar_0_bar_0 - location
    loc_bar_1_bar_0_bar_0_bar_0 - location
    loc_bar_2_bar_0_bar_0_bar_0 - location
    loc_bar_3_bar_0_bar_0_bar_0 - location
    loc_bar_4_bar_0_bar_0_bar_0 - location
    loc_bar_5_bar_0_bar_0_bar_0 - location
    Cabinet_bar__plus_01_dot_00 - receptacle
    Cabinet_bar__plus_02_dot_00 - receptacle
    CounterTop_bar__plus_01_dot_00 - receptacle
    Drawer_bar__plus_01_dot_00 - receptacle
    Microwave_bar__plus_01_dot_00 - receptacle
    Sink_bar__plus_01_dot_00_bar_SinkBasin - receptacle
    Apple_bar__plus_00_dot_10 - object
    Apple_bar__plus_00_dot_20 - object
    Mug_bar__plus_00_dot_30 - object
    Egg_bar__plus_00_dot_40 - object
    AppleType - otype
    MugType - otype
    EggType - otype
    CabinetType - rtype
    CounterTopType - rtype
    DrawerType - rtype
    MicrowaveType - rtype
    SinkBasinType - rtype
    ${CONSTANTS.join('\n    ')}
  )
  (:init
    (atLocation agent1 loc_bar_0_bar_0_bar_0_bar_0)
    (receptacleAtLocation Cabinet_bar__plus_01_dot_00 loc_bar_1_bar_0_bar_0_bar_0)
    (receptacleAtLocation Cabinet_bar__plus_02_dot_00 loc_bar_2_bar_0_bar_0_bar_0)
    (receptacleAtLocation CounterTop_bar__plus_01_dot_00 loc_bar_3_bar_0_bar_0_bar_0)
    (receptacleAtLocation Drawer_bar__plus_01_dot_00 loc_bar_3_bar_0_bar_0_bar_0)
    (receptacleAtLocation Microwave_bar__plus_01_dot_00 loc_bar_4_bar_0_bar_0_bar_0)
    (receptacleAtLocation Sink_bar__plus_01_dot_00_bar_SinkBasin loc_bar_5_bar_0_bar_0_bar_0)
    (receptacleType Cabinet_bar__plus_01_dot_00 CabinetType)
    (receptacleType Cabinet_bar__plus_02_dot_00 CabinetType)
    (receptacleType CounterTop_bar__plus_01_dot_00 CounterTopType)
    (receptacleType Drawer_bar__plus_01_dot_00 DrawerType)
    (receptacleType Microwave_bar__plus_01_dot_00 MicrowaveType)
    (receptacleType Sink_bar__plus_01_dot_00_bar_SinkBasin SinkBasinType)
    (openable Cabinet_bar__plus_01_dot_00)
    (openable Drawer_bar__plus_01_dot_00)
    (openable Microwave_bar__plus_01_dot_00)
    (objectType Apple_bar__plus_00_dot_10 AppleType)
    (objectType Apple_bar__plus_00_dot_20 AppleType)
    (objectType Mug_bar__plus_00_dot_30 MugType)
    (objectType Egg_bar__plus_00_dot_40 EggType)
    (pickupable Apple_bar__plus_00_dot_10)
    (pickupable Apple_bar__plus_00_dot_20)
    (pickupable Mug_bar__plus_00_dot_30)
    (pickupable Egg_bar__plus_00_dot_40)
    (heatable Apple_bar__plus_00_dot_10)
    (heatable Apple_bar__plus_00_dot_20)
    (heatable Mug_bar__plus_00_dot_30)
    (cleanable Mug_bar__plus_00_dot_30)
    (isReceptacleObject Mug_bar__plus_00_dot_30)
    (inReceptacle Apple_bar__plus_00_dot_10 CounterTop_bar__plus_01_dot_00)
    (inReceptacle Mug_bar__plus_00_dot_30 CounterTop_bar__plus_01_dot_00)
    (inReceptacle Apple_bar__plus_00_dot_20 Cabinet_bar__plus_01_dot_00)
    (inReceptacle Egg_bar__plus_00_dot_40 Drawer_bar__plus_01_dot_00)
    (objectAtLocation Apple_bar__plus_00_dot_10 loc_bar_3_bar_0_bar_0_bar_0)
    (objectAtLocation Mug_bar__plus_00_dot_30 loc_bar_3_bar_0_bar_0_bar_0)
    (objectAtLocation Apple_bar__plus_00_dot_20 loc_bar_1_bar_0_bar_0_bar_0)
    (objectAtLocation Egg_bar__plus_00_dot_40 loc_bar_3_bar_0_bar_0_bar_0)
    (canContain CabinetType AppleType) (canContain CabinetType MugType) (canContain CabinetType EggType)
    (canContain CounterTopType AppleType) (canContain CounterTopType MugType) (canContain CounterTopType EggType)
    (canContain DrawerType AppleType) (canContain DrawerType MugType) (canContain DrawerType EggType)
    (canContain MicrowaveType AppleType) (canContain MicrowaveType MugType) (canContain MicrowaveType EggType)
    (canContain SinkBasinType AppleType) (canContain SinkBasinType MugType) (canContain SinkBasinType EggType)
  )
  (:goal (and (exists (?r - receptacle) (exists (?o - object) (and (heatable ?o) (objectType ?o AppleType)
    (receptacleType ?r CabinetType) (isHot ?o) (inReceptacle ?o ?r))))))
)
`;

export const KITCHEN_WALKTHROUGH = [
  'go to countertop 1',
  'take apple 2 from countertop 1',
  'go to microwave 1',
  'heat apple 2 with microwave 1',
  'go to cabinet 1',
  'move apple 2 to cabinet 1',
];

export function kitchenFile(walkthrough: string[] | null = KITCHEN_WALKTHROUGH): GameFile {
  return { pddl_domain: GENERATED_DOMAIN, pddl_problem: KITCHEN_PROBLEM, grammar: generatedGrammar('put a hot apple in cabinet'), solvable: true, walkthrough };
}

export function kitchenGame(): TwPddlGame {
  return new TwPddlGame(new GameLogic(kitchenFile(), 'fixture kitchen'));
}

/**
 * A bedroom for the look task: a desk lamp on desk 1, a cd in drawer 1 (openable), a pillow on bed 1. Goal: hold a
 * cd where the toggled desk lamp stands.
 */
export const BEDROOM_PROBLEM = `(define (problem fixture_bedroom)
  (:domain alfred)
  (:objects
    agent1 - agent
    loc_bar_0_bar_0_bar_0_bar_0 - location
    loc_bar_1_bar_0_bar_0_bar_0 - location
    loc_bar_2_bar_0_bar_0_bar_0 - location
    loc_bar_3_bar_0_bar_0_bar_0 - location
    Bed_bar__plus_01_dot_00 - receptacle
    Desk_bar__plus_01_dot_00 - receptacle
    Drawer_bar__plus_01_dot_00 - receptacle
    CD_bar__plus_00_dot_10 - object
    DeskLamp_bar__plus_00_dot_20 - object
    Pillow_bar__plus_00_dot_30 - object
    CDType - otype
    DeskLampType - otype
    PillowType - otype
    BedType - rtype
    DeskType - rtype
    DrawerType - rtype
    SinkBasinType - rtype
    MicrowaveType - rtype
    ${CONSTANTS.join('\n    ')}
  )
  (:init
    (atLocation agent1 loc_bar_0_bar_0_bar_0_bar_0)
    (receptacleAtLocation Bed_bar__plus_01_dot_00 loc_bar_1_bar_0_bar_0_bar_0)
    (receptacleAtLocation Desk_bar__plus_01_dot_00 loc_bar_2_bar_0_bar_0_bar_0)
    (receptacleAtLocation Drawer_bar__plus_01_dot_00 loc_bar_3_bar_0_bar_0_bar_0)
    (receptacleType Bed_bar__plus_01_dot_00 BedType)
    (receptacleType Desk_bar__plus_01_dot_00 DeskType)
    (receptacleType Drawer_bar__plus_01_dot_00 DrawerType)
    (openable Drawer_bar__plus_01_dot_00)
    (objectType CD_bar__plus_00_dot_10 CDType)
    (objectType DeskLamp_bar__plus_00_dot_20 DeskLampType)
    (objectType Pillow_bar__plus_00_dot_30 PillowType)
    (pickupable CD_bar__plus_00_dot_10)
    (pickupable Pillow_bar__plus_00_dot_30)
    (toggleable DeskLamp_bar__plus_00_dot_20)
    (inReceptacle CD_bar__plus_00_dot_10 Drawer_bar__plus_01_dot_00)
    (inReceptacle DeskLamp_bar__plus_00_dot_20 Desk_bar__plus_01_dot_00)
    (inReceptacle Pillow_bar__plus_00_dot_30 Bed_bar__plus_01_dot_00)
    (objectAtLocation CD_bar__plus_00_dot_10 loc_bar_3_bar_0_bar_0_bar_0)
    (objectAtLocation DeskLamp_bar__plus_00_dot_20 loc_bar_2_bar_0_bar_0_bar_0)
    (objectAtLocation Pillow_bar__plus_00_dot_30 loc_bar_1_bar_0_bar_0_bar_0)
    (canContain BedType CDType) (canContain BedType PillowType)
    (canContain DeskType CDType) (canContain DeskType PillowType)
    (canContain DrawerType CDType) (canContain DrawerType PillowType)
  )
  (:goal (and
    (exists (?ot - object ?r - receptacle ?a - agent ?l - location) (and (objectType ?ot DeskLampType) (toggleable ?ot)
      (isToggled ?ot) (receptacleAtLocation ?r ?l) (atLocation ?a ?l) (inReceptacle ?ot ?r)))
    (exists (?o - object ?a - agent) (and (objectType ?o CDType) (holds ?a ?o)))))
)
`;

export const BEDROOM_WALKTHROUGH = ['go to drawer 1', 'open drawer 1', 'take cd 1 from drawer 1', 'go to desk 1', 'use desklamp 1'];

export function bedroomFile(walkthrough: string[] | null = BEDROOM_WALKTHROUGH): GameFile {
  return {
    pddl_domain: GENERATED_DOMAIN,
    pddl_problem: BEDROOM_PROBLEM,
    grammar: generatedGrammar('look at cd under the desklamp'),
    solvable: true,
    walkthrough,
  };
}

/**
 * The bedroom with the desk's id `Desk`, without ALFRED's `_bar_` suffix, as a game file may name a receptacle:
 * ALFWorld's demangler names it `desk ` (with a trailing space).
 */
export function bareDeskFile(): GameFile {
  return { ...bedroomFile(null), pddl_problem: BEDROOM_PROBLEM.replaceAll('Desk_bar__plus_01_dot_00', 'Desk') };
}
