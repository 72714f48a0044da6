"""Write src/cuda/coop/__init__.pyi, the operations part of src/cuda/coop/__init__.py and
src/cuda/coop/ops/_families.py, from the code (cuda.coop.__all__ and the op records in ops/_registry.py).

Run after changing a public name or an operation's signature or summary line:

    PYTHONPATH=src python scripts/generate_stubs.py

``--check`` exits 1 instead of writing when the committed file is stale.
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
# Rendering only reads signatures: no compiler backend needed.
os.environ.setdefault("CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION", "1")

from cuda.coop import _stubgen  # noqa: E402

if __name__ == "__main__":
    if "--check" in sys.argv[1:]:
        stale = _stubgen.stale()
        for path in _stubgen.generated():
            print(f"{path}: {'stale' if path in stale else 'up to date'}")
        sys.exit(1 if stale else 0)
    changed = _stubgen.write()
    names = ", ".join(str(path) for path in _stubgen.generated())
    print(f"{names}: {'written' if changed else 'unchanged'}")
