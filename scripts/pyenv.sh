#!/usr/bin/env bash
# Creates (or checks) the project-local Python environment .venv with torch, transformers, peft, safetensors, numpy and
# tensorboard. Tests use it as an independent reference for the model (logits, log-probs, checkpoints, chat templates)
# and for the event files runs write (TensorBoard's own reader).
# Idempotent: when .venv already imports everything at the pinned versions it returns at once.
# pip only reaches local package indexes here: --retries 0 --timeout 2 keeps a missing package from costing minutes.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
py="$venv/bin/python"
want_torch="2.13.0"
want_transformers="5.17.0"
want_peft="0.21.0"
want_tensorboard="2.21.0"

check() {
  "$py" - "$want_torch" "$want_transformers" "$want_peft" "$want_tensorboard" <<'PY' 2>/dev/null
import sys
import torch, transformers, peft, safetensors, numpy, tensorboard  # noqa: F401
ok = (torch.__version__.split('+')[0] == sys.argv[1] and transformers.__version__ == sys.argv[2] and peft.__version__ == sys.argv[3]
      and tensorboard.__version__ == sys.argv[4])
sys.exit(0 if ok else 1)
PY
}

if [ -x "$py" ] && check; then
  echo "[pyenv] $venv ready (torch $want_torch, transformers $want_transformers, peft $want_peft, tensorboard $want_tensorboard)"
  exit 0
fi

if [ ! -x "$py" ]; then
  echo "[pyenv] creating $venv"
  python3 -m venv "$venv"
fi
echo "[pyenv] installing torch==$want_torch transformers==$want_transformers peft==$want_peft tensorboard==$want_tensorboard safetensors numpy"
"$venv/bin/pip" install --disable-pip-version-check --retries 0 --timeout 2 \
  "torch==$want_torch" "transformers==$want_transformers" "peft==$want_peft" "tensorboard==$want_tensorboard" safetensors numpy
if ! check; then
  echo "[pyenv] $venv was installed but does not import torch/transformers/peft/tensorboard at the pinned versions" >&2
  exit 1
fi
echo "[pyenv] $venv ready"
