"""Importing the store package stays light: SQLite, psycopg and asyncio load only when a store needs them."""

from __future__ import annotations

import subprocess
import sys


def imported_modules(statement: str) -> set[str]:
    completed = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", statement], capture_output=True, text=True, check=True
    )
    return {
        line.rsplit("|", 1)[1].strip()
        for line in completed.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }


def test_importing_parley_store_loads_no_database_driver():
    modules = imported_modules("import parley.store")

    assert "parley.store" in modules
    assert not {
        name for name in modules if name.split(".")[0] in {"sqlite3", "psycopg", "psycopg_pool", "asyncio"}
    }


def test_a_sqlite_store_loads_sqlite_but_not_psycopg(tmp_path):
    modules = imported_modules(
        f"import parley.store as s; s.open_store('sqlite:///{tmp_path}/chats.db').close()"
    )

    assert "sqlite3" in modules
    assert not {name for name in modules if name.split(".")[0] in {"psycopg", "psycopg_pool"}}
