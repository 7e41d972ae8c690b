"""``import parley`` loads no provider SDK, no HTTP client, no pydantic and no asyncio."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("openai", "anthropic", "httpx", "httpx2", "pydantic", "asyncio", "sqlite3")


def imported_modules(statement: str) -> set[str]:
    completed = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", statement], capture_output=True, text=True, check=True
    )
    names = set()
    for line in completed.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


def test_import_parley_loads_no_sdk():
    modules = imported_modules("import parley")

    assert "parley" in modules
    assert not {name for name in modules if name.split(".")[0] in HEAVY}


def test_building_an_agent_with_a_config_list_loads_no_sdk():
    modules = imported_modules(
        "import parley; parley.ConversableAgent('a', llm_config={'config_list': "
        "[{'model': 'gpt-4o', 'api_key': 'x'}, {'model': 'claude-haiku-4-5', 'api_type': 'anthropic'}], "
        "'cache_seed': 41})"
    )

    assert not {name for name in modules if name.split(".")[0] in HEAVY}
