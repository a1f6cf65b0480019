"""Replays trials written by scripts/paper-prompts-check.ts with LaMer's own code and compares the prompts.

usage: python3 scripts/paper-prompts-check.py LAMER_CHECKOUT TRIALS_JSON

For each trial it does what LaMer's Sokoban and MineSweeper environment managers do between their steps (their
build_text_obs): it stores every step in LaMer's SimpleMemory (the action from LaMer's projection of the response under
fidelity 'paper', else the one lamer recorded), fetches the windows LaMer fetches, and builds each prompt with LaMer's
get_sokoban_prompt / get_minesweeper_prompt. Exits 1 when a prompt or a recorded action differs.
"""
import ast
import difflib
import json
import sys
import types

lamer, trials_file = sys.argv[1], sys.argv[2]


def load(env, name, drop=()):
    path = f"{lamer}/agent_system/environments/{env}/{name}.py"
    text = open(path, encoding="utf-8").read()
    for line in drop:  # projection.py imports torch without using it
        text = text.replace(line, "")
    module = types.ModuleType(f"{env}_{name}")
    exec(compile(text, path, "exec"), module.__dict__)
    return module


LAMER = {
    "sokoban": (load("sokoban", "prompt").get_sokoban_prompt, load("sokoban", "memory").SimpleMemorySokoban,
                load("sokoban", "projection", drop=("import torch\n",)).sokoban_projection),
    "minesweeper": (load("minesweeper", "prompt").get_minesweeper_prompt, load("minesweeper", "memory").SimpleMemoryMineSweeper,
                    load("minesweeper", "projection").minesweeper_projection),
}
SOKOBAN_ACTIONS = {0: "still", 1: "up", 2: "down", 3: "left", 4: "right"}

prompts = actions = differing = 0
for trial in json.load(open(trials_file, encoding="utf-8")):
    env = trial["env"]
    get_prompt, Memory, projection = LAMER[env]
    paper_fidelity = trial["name"].endswith("-paper")
    memories = [Memory() for _ in range(3)]
    for memory in memories:
        memory.reset(1)
    reflections = {}
    traj_idx = turn_idx = 0

    def prompt(phase):
        obs_length = 2 if phase == "play" else 7
        current = "" if turn_idx == 0 else memories[traj_idx].fetch(obs_length=obs_length)[0][0]
        past = {k: memories[k].fetch()[0][0] for k in range(traj_idx)}
        args = dict(phase=phase, turn_idx=turn_idx, traj_idx=traj_idx, init_observation=trial["initial"], curr_traj=current,
                    past_traj=past, reflection=reflections, reflection_type=trial["mode"])
        if env == "sokoban":
            return get_prompt(num_actions_per_turn=3, **args)
        return get_prompt(n_mines=3, board_size=6, **args)

    for row in trial["rows"]:
        if row["phase"] == "play" and row["episode"] > traj_idx:
            # lamer writes no reflection under history_only; LaMer writes one that its memory does not show.
            reflections[traj_idx] = "(not shown)"
            traj_idx, turn_idx = traj_idx + 1, 0
        expected = prompt(row["phase"])
        prompts += 1
        if expected != row["prompt"]:
            differing += 1
            print(f"DIFFERENT: {trial['name']} {trial['mode']} episode {row['episode']} turn {row['turn']} {row['phase']}")
            print("\n".join(difflib.unified_diff(expected.split("\n"), row["prompt"].split("\n"), "LaMer", "lamer", lineterm="")))
        if row["phase"] == "reflect":
            texts, _ = projection([row["response"]], phase="reflect") if env == "sokoban" else projection([row["response"]], board_size=6, phase="reflect")
            reflections[traj_idx] = texts[0]
            traj_idx, turn_idx = traj_idx + 1, 0
            continue
        action = row["historyAction"]
        if paper_fidelity:
            actions += 1
            if env == "sokoban":
                _, parsed, _ = projection([row["response"]], phase="play", num_actions_per_turn=3)
                action = str([SOKOBAN_ACTIONS[a] for a in parsed[0]])
            else:
                _, parsed, valids = projection([row["response"]], board_size=6, phase="play")
                action = f"({parsed[0][0]}, {parsed[0][1]})" if valids[0] else "no operation"
            if action != row["historyAction"]:
                differing += 1
                print(f"DIFFERENT action: {trial['name']} {row['response']!r}: LaMer {action!r}, lamer {row['historyAction']!r}")
        stored = ast.literal_eval(action) if env == "sokoban" else action  # Sokoban's memory holds the list itself
        memories[traj_idx].store({"text_obs": [row["obs"]], "action": [stored], "dones": [row["done"]]})
        turn_idx += 1

print(f"{prompts} prompts and {actions} parsed actions compared with LaMer's, {differing} different")
sys.exit(1 if differing else 0)
