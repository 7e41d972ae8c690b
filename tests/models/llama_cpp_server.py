"""llama-cpp-python's OpenAI-compatible server (``llama_cpp.server``) on SmolLM2, on 127.0.0.1.

``./scripts/test`` installs the server's dependencies (llama-cpp-python's ``server`` extra). Like
``smollm2.py``, a missing piece skips the tests that need it, or fails them under
``PARLEY_REQUIRE_LOCAL_MODEL=1``.
"""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from smollm2 import REQUIRED

SERVER_MODULES = ("uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def llama_cpp_server(model: Path, *, timeout: float = 120) -> Iterator[str]:
    """Run ``python -m llama_cpp.server`` on ``model``; yield its base URL (``http://127.0.0.1:PORT/v1``)."""
    missing = [name for name in SERVER_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        reason = f"llama-cpp-python's server extra is not installed ({', '.join(missing)})"
        if REQUIRED:
            pytest.fail(f"PARLEY_REQUIRE_LOCAL_MODEL=1 but {reason}")
        pytest.skip(reason)
    port = _free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1"]
    command += ["--port", str(port), "--n_ctx", "2048", "--verbose", "False"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                pytest.fail(
                    f"llama_cpp.server exited with {process.returncode}: {process.stderr.read()[-2000:]}"
                )
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"llama_cpp.server did not answer on {url} within {timeout:.0f}s")
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
