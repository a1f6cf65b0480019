"""ALFWorld's Demangler as the reference for lamer's object names (src/envs/alfworld/engine/demangle.ts).

usage: alfworld_demangle_reference.py ALFWORLD < IDS.json
  ALFWORLD  a checkout of github.com/alfworld/alfworld
  IDS.json  a JSON list of the lowercased entity ids of one game (the arguments of its :init facts)
prints a JSON object: id -> name, as AlfredDemangler names them (Demangler(game_infos=..., shuffle=False) and
demangle_alfred_name). The class is read from the checkout's alfworld/agents/utils/misc.py and run as it is; the rest
of that module (which imports TextWorld and ALFRED's generator) is not loaded.
"""
import json
import os
import random  # noqa: F401  (the class body refers to it)
import re
import sys
from collections import Counter  # noqa: F401  (the class body refers to it)

ALFWORLD = sys.argv[1]
source = open(os.path.join(ALFWORLD, 'alfworld', 'agents', 'utils', 'misc.py')).read()
found = re.search(r'^class Demangler\b.*?(?=^\S)', source, re.S | re.M)
if found is None:
    sys.exit('alfworld_demangle_reference.py: no class Demangler in alfworld/agents/utils/misc.py')
exec(found.group(0))


class Info:
    def __init__(self, id):
        self.id = id


ids = json.load(sys.stdin)
demangler = Demangler(game_infos={i: Info(i) for i in ids}, shuffle=False)  # noqa: F821
print(json.dumps({i: demangler.demangle_alfred_name(i) for i in ids}))
