"""Fast Downward's translator as the reference for lamer's ALFWorld grounding.

usage: alfworld_fd_reference.py DOWNWARD_SRC SPEC.json
  DOWNWARD_SRC  the src folder of a checkout of github.com/aibasel/downward (its translate package is pure Python)
  SPEC.json     {"domain": ..., "problem": ..., "ops": [operator names to apply in order]}
prints {"operators": N, "trace": [{"applicable": [...names...], "effects": [...], "goal": bool}, ...,
        {"applicable": [...]}]}

Translates as TextWorld's PDDL backend does (invariant synthesis off: one binary variable per fluent atom, unreachable
facts kept, no variable filtering or reordering), then simulates the SAS task as TextWorld's libdownward does:
operators applicable in the state (names deduplicated), successor states (an effect fires when its conditions hold in
the state before), derived variables (the goal's axioms) to a fixpoint, and the effects each applied operator lists.
The current translator checks that a domain's constants are declared in the domain; the fork TextWorld runs took them
from the problem, so the problem's declarations of names the domain uses are moved into a :constants section first.
"""
import contextlib
import io
import json
import re
import sys

DOWNWARD_SRC, SPEC = sys.argv[1], sys.argv[2]
sys.path.insert(0, DOWNWARD_SRC)
from translate import normalize, options  # noqa: E402
from translate import main as fd  # noqa: E402
from translate.pddl_parser import lisp_parser, parsing_functions  # noqa: E402

options.set_options(['domain', 'task', '--invariant-generation-max-candidates', '0', '--keep-unreachable-facts',
                     '--skip-variable-reordering', '--keep-unimportant-variables', '--full-encoding'])

DOMAIN_CONSTANTS = [('sinkbasintype', 'rtype'), ('microwavetype', 'rtype'), ('fridgetype', 'rtype'),
                    ('knifetype', 'otype'), ('butterknifetype', 'otype')]


def hoist_constants(domain, problem):
    dl = domain.lower()
    objs = re.search(r'\(:objects(.*?)\)', problem.lower(), re.S).group(1)
    decls = re.findall(r'(\S+)\s+-\s+(\S+)', objs)
    used = [(n, t) for n, t in decls if re.search(r'[\s(]' + re.escape(n) + r'[\s)]', dl)]
    for n, t in DOMAIN_CONSTANTS:
        if n in dl and n not in [u for u, _ in decls]:
            used.append((n, t))
    if not used:
        return domain, problem
    consts = ' '.join(f'{n} - {t}' for n, t in used)
    domain = re.sub(r'(\(:types[^)]*\))', r'\1\n (:constants ' + consts + ')', domain, count=1, flags=re.I)
    for n, t in used:
        problem = re.sub(r'(?i)(?<![\w?])' + re.escape(n) + r'\s+-\s+' + re.escape(t) + r'(?![\w])', ' ', problem)
    return domain, problem


def translate(domain, problem):
    domain, problem = hoist_constants(domain, problem)
    with contextlib.redirect_stdout(io.StringIO()):
        task = parsing_functions.parse_task(lisp_parser.parse_nested_list(domain.split('\n')),
                                            lisp_parser.parse_nested_list(problem.split('\n')))
        normalize.normalize(task)
        out = io.StringIO()
        fd.pddl_to_sas(task).output(out)
    return out.getvalue()


def parse_sas(text):
    lines = text.split('\n')
    pos = 0

    def nxt():
        nonlocal pos
        pos += 1
        return lines[pos - 1]
    variables, ops, rules, init, goal = [], [], [], None, []
    while pos < len(lines):
        line = nxt()
        if line == 'begin_variable':
            nxt()
            nxt()
            variables.append([nxt() for _ in range(int(nxt()))])
            nxt()
        elif line == 'begin_state':
            init = [int(nxt()) for _ in variables]
            nxt()
        elif line == 'begin_goal':
            goal = [tuple(map(int, nxt().split())) for _ in range(int(nxt()))]
            nxt()
        elif line == 'begin_operator':
            name = nxt()
            prevail = [tuple(map(int, nxt().split())) for _ in range(int(nxt()))]
            effects = []
            for _ in range(int(nxt())):
                parts = list(map(int, nxt().split()))
                nc = parts[0]
                conds = [(parts[1 + 2 * k], parts[2 + 2 * k]) for k in range(nc)]
                var, pre, post = parts[1 + 2 * nc:4 + 2 * nc]
                effects.append((conds, var, pre, post))
            nxt()
            nxt()
            ops.append((name, prevail, effects))
        elif line == 'begin_rule':
            conds = [tuple(map(int, nxt().split())) for _ in range(int(nxt()))]
            var, pre, post = map(int, nxt().split())
            nxt()
            rules.append((conds, var, pre, post))
        elif line == 'begin_mutex_group':
            while nxt() != 'end_mutex_group':
                pass
    return variables, init, goal, ops, rules


def successor(op, s):
    t = list(s)
    for conds, v, _, post in op[2]:
        if all(s[cv] == cval for cv, cval in conds):
            t[v] = post
    return t


def main():
    spec = json.load(open(SPEC))
    variables, state, goal, ops, rules = parse_sas(translate(spec['domain'], spec['problem']))
    init = list(state)
    derived = {v for _, v, _, _ in rules}

    def with_axioms(s):
        t = list(s)
        for v in derived:
            t[v] = init[v]
        changed = True
        while changed:
            changed = False
            for conds, v, _, post in rules:
                if t[v] != post and all(t[cv] == cval for cv, cval in conds):
                    t[v] = post
                    changed = True
        return t

    def applicable(op, s):
        return all(s[v] == val for v, val in op[1]) and all(pre == -1 or s[v] == pre for _, v, pre, _ in op[2])

    def names(s):
        return sorted({op[0] for op in ops if applicable(op, s)})
    trace = []
    for name in spec['ops']:
        step = {'applicable': names(state)}
        candidates = [op for op in ops if op[0] == name and applicable(op, state)]
        if not candidates:
            step['error'] = 'not applicable: ' + name
            trace.append(step)
            break
        op = candidates[0]
        step['effects'] = [variables[v][post] for _, v, _, post in op[2]]
        state = successor(op, state)
        step['goal'] = all(with_axioms(state)[v] == val for v, val in goal)
        trace.append(step)
    trace.append({'applicable': names(state)})
    json.dump({'operators': len(ops), 'trace': trace}, sys.stdout)


if __name__ == '__main__':
    main()
