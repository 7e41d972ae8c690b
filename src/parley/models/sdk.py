"""What the provider clients share: importing an SDK on first use, and splitting request parameters."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from types import ModuleType
from typing import Any


def import_sdk(module: str, extra: str) -> ModuleType:
    """Import a provider SDK, or fail saying which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ImportError(
            f"this model config needs the {module!r} package: pip install 'parley[{extra}]'"
        ) from error


_parameters: dict[Any, frozenset[str]] = {}


def split_known(function: Callable[..., Any], params: dict[str, Any]) -> dict[str, Any]:
    """``params`` for ``function``: those it does not name are moved into ``extra_body``.

    Servers accept parameters an SDK does not know (vLLM's ``top_k``, Ollama's ``num_ctx``...); the SDK
    sends them only through ``extra_body``.
    """
    key = getattr(function, "__func__", function)
    known = _parameters.get(key)
    if known is None:
        known = _parameters[key] = frozenset(inspect.signature(function).parameters)
    unknown = {name: value for name, value in params.items() if name not in known}
    if not unknown:
        return params
    kept = {name: value for name, value in params.items() if name in known}
    kept["extra_body"] = {**unknown, **(params.get("extra_body") or {})}
    return kept


class PerEventLoop:
    """Holds one async SDK client per event loop: an async HTTP client must not outlive its loop."""

    __slots__ = ("_client", "_factory", "_loop")

    def __init__(self, factory: Callable[[], Any]) -> None:
        self._factory = factory
        self._loop: Any = None
        self._client: Any = None

    def get(self) -> Any:
        import asyncio

        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._client = self._factory()
            self._loop = loop
        return self._client
