"""The services some tests need, started by ``./scripts/test`` (see scripts/services.sh).

Without one, its tests are skipped; with ``PARLEY_REQUIRE_SERVICES=1`` (CI) they fail instead.
"""

from __future__ import annotations

import os
import shutil

import pytest

REQUIRED = os.environ.get("PARLEY_REQUIRE_SERVICES") == "1"


def _missing(reason: str) -> None:
    if REQUIRED:
        pytest.fail(f"PARLEY_REQUIRE_SERVICES=1 but {reason}")
    pytest.skip(reason)


def postgres_url() -> str:
    """The URL of the tests' PostgreSQL server on 127.0.0.1."""
    url = os.environ.get("PARLEY_TEST_POSTGRES_URL")
    if not url:
        _missing("no PostgreSQL server for the tests (PARLEY_TEST_POSTGRES_URL; ./scripts/test starts one)")
    assert url is not None
    return url


def chromium_path() -> str:
    """The headless Chromium executable."""
    path = os.environ.get("PARLEY_CHROMIUM")
    if not path:
        _missing("Chromium is not installed (PARLEY_CHROMIUM; ./scripts/test installs Debian's chromium)")
    assert path is not None
    return path


def dot_path() -> str:
    """Graphviz's ``dot`` program."""
    path = shutil.which("dot")
    if not path:
        _missing("Graphviz is not installed (./scripts/test installs Debian's graphviz)")
    assert path is not None
    return path
