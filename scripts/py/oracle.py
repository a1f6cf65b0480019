"""A long-lived reference process for tests: importing torch and transformers takes seconds, so a test file starts
this once and sends it requests, one JSON object per line on stdin, answered by one JSON line on stdout:

  {"op": "make", "args": [...make_checkpoint.py arguments]}            -> {"ok": true, "result": {...}}
  {"op": "reference", "model": DIR, "request": {...reference.py input}}  -> {"ok": true, "result": {...}}
  {"op": "chat", "tokenizer": DIR, "messages": [...], "kwargs": {...}}    -> {"ok": true, "result": {"ids": [...], "text": "..."}}
  {"op": "encode", "tokenizer": DIR, "texts": [...]}                     -> {"ok": true, "result": {"ids": [[...], ...]}}
  {"op": "peft_make" | "peft_count" | "peft_reference", ...}             -> peft_reference.py
Failures answer {"ok": false, "error": "..."} and the process keeps serving.
"""
import contextlib
import io
import json
import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import make_checkpoint  # noqa: E402
import reference  # noqa: E402
import importlib  # noqa: E402
import transformers  # noqa: E402

_tokenizers = {}


def tokenizer(path):
    if path not in _tokenizers:
        _tokenizers[path] = transformers.AutoTokenizer.from_pretrained(path)
    return _tokenizers[path]


def handle(req):
    op = req["op"]
    if op == "make":
        return make_checkpoint.build(req["args"])
    if op == "reference":
        return reference.compute(req["model"], req["request"])
    if op == "chat":
        tok = tokenizer(req["tokenizer"])
        kwargs = req.get("kwargs", {})
        text = tok.apply_chat_template(req["messages"], tokenize=False, **kwargs)
        ids = tok.apply_chat_template(req["messages"], tokenize=True, return_dict=True, **kwargs)["input_ids"]
        return {"ids": list(ids), "text": text}
    if op == "encode":
        tok = tokenizer(req["tokenizer"])
        return {"ids": [tok(t, add_special_tokens=False)["input_ids"] for t in req["texts"]]}
    if op in ("peft_make", "peft_count", "peft_reference"):
        # peft is imported on first use: tests that never ask for it do not pay for the import.
        pr = importlib.import_module("peft_reference")
        return {"peft_make": pr.make, "peft_count": pr.count, "peft_reference": pr.reference}[op](req)
    raise ValueError(f"unknown op {op!r}")


def main():
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            # Library chatter (progress bars) must not reach the protocol stream.
            with contextlib.redirect_stdout(io.StringIO()):
                result = handle(json.loads(line))
            reply = {"ok": True, "result": result}
        except Exception as e:  # noqa: BLE001
            reply = {"ok": False, "error": f"{type(e).__name__}: {e}\n{traceback.format_exc()[-1500:]}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
