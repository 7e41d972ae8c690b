"""Every ``python`` code block in the README and docs runs as written and prints what it says.

A ``# ...`` comment right after a ``print(...)`` line is the output that print must produce (a
promised line ending in ``...`` only promises how the line starts).
"""

from __future__ import annotations

import contextlib
import io
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


def promised_output(code: str) -> list[str]:
    """The ``# ...`` lines that follow ``print(...)`` lines."""
    promised: list[str] = []
    after_print = False
    for line in code.splitlines():
        stripped = line.strip()
        if after_print and stripped.startswith("# "):
            promised.append(stripped[2:])
            continue
        after_print = stripped.startswith("print(")
    return promised


def test_the_readme_has_examples():
    assert any(name.startswith("README.md") for name, _ in blocks())


@pytest.mark.parametrize(("name", "code"), blocks(), ids=[name for name, _ in blocks()])
def test_example_runs_and_prints_what_it_says(name, code):
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, name, "exec"), {"__name__": f"example_{name}"})

    promised = promised_output(code)
    if promised:
        lines = printed.getvalue().splitlines()
        assert len(lines) == len(promised), lines
        for line, promise in zip(lines, promised, strict=True):
            if promise.endswith("..."):
                assert line.startswith(promise.removesuffix("...").rstrip()), (line, promise)
            else:
                assert line == promise
