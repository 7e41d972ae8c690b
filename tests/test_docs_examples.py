"""Every ``python`` code block in the README and docs runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def blocks() -> list[tuple[str, str]]:
    found = []
    for document in DOCUMENTS:
        for number, match in enumerate(BLOCK.finditer(document.read_text()), start=1):
            found.append((f"{document.name}#{number}", match.group(1)))
    return found


def test_the_readme_has_examples():
    assert any(name.startswith("README.md") for name, _ in blocks())


@pytest.mark.parametrize(("name", "code"), blocks(), ids=[name for name, _ in blocks()])
def test_example_runs(name, code):
    exec(compile(code, name, "exec"), {"__name__": f"example_{name}"})
