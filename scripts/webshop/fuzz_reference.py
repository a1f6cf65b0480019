# thefuzz's token_set_ratio on pairs read as JSON from stdin ([[a, b], ...]; a list is a Python tuple), printed as
# JSON: {"thefuzz": version, "backend": "difflib" | "rapidfuzz" | "python-Levenshtein", "python": version, "scores"}.
# Run by scripts/webshop/fuzz-agreement.ts.
import json
import platform
import sys

import thefuzz
from thefuzz import fuzz

pairs = json.load(sys.stdin)
matcher = getattr(fuzz, "SequenceMatcher", None)
if matcher is None:
    backend = "rapidfuzz"
elif matcher.__module__ == "difflib":
    backend = "difflib"
else:
    backend = "python-Levenshtein"
value = lambda v: tuple(v) if isinstance(v, list) else v
scores = [fuzz.token_set_ratio(value(a), value(b)) for a, b in pairs]
print(json.dumps({"thefuzz": getattr(thefuzz, "__version__", "?"), "backend": backend, "python": platform.python_version(), "scores": scores}))
