"""JSONL traces: every event of a chat as one line of JSON, appended as it happens.

``trace="path.jsonl"`` on a chat entry point traces that chat and the chats started inside it;
``PARLEY_TRACE=path.jsonl`` in the environment traces every chat of the program. A trace is readable
while its chats run (each line is written and flushed whole), and ``parley view path.jsonl`` shows it.
Several chats may share a file: each line names its chat (``chat_id``). The file is closed whenever a
chat stops and opened again by the next event, so a trace rotated or deleted between chats starts anew.
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any, TextIO

from parley.events import ChatEvent, Listener, checked_listeners
from parley.utf8 import is_utf8

TRACE_VARIABLE = "PARLEY_TRACE"


class JsonlTrace:
    """A listener that appends each event to a JSONL file.

    Args:
        path: the file (created if missing, appended to if not).
    """

    follows_nested_chats = True
    """Chats started inside a traced chat are traced too."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        from pathlib import Path  # imported on use: most chats are not traced

        self.path = Path(path)
        self._file: TextIO | None = None
        self._lock = threading.Lock()

    def __call__(self, event: ChatEvent) -> None:
        data = event.to_dict()
        line = json.dumps(data, ensure_ascii=False, default=_plain) + "\n"
        if not is_utf8(line):  # a file name's undecodable bytes, say: written as escapes
            line = json.dumps(data, default=_plain) + "\n"
        with self._lock:
            if self._file is None:
                self._file = self._open()
            self._file.write(line)
            if event.kind == "chat_stopped":  # a file moved or deleted between chats is started afresh
                self._file.close()
                self._file = None
            else:
                self._file.flush()

    def _open(self) -> TextIO:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            return open(self.path, "a", encoding="utf-8")
        except IsADirectoryError:
            raise ValueError(
                f"the trace {str(self.path)!r} is a directory: trace= and {TRACE_VARIABLE} name a JSONL file"
            ) from None

    def close(self) -> None:
        """Close the file (it is opened again by the next event)."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def __repr__(self) -> str:
        return f"JsonlTrace({str(self.path)!r})"


def _plain(value: Any) -> Any:
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    return repr(value)


_traces: dict[str, JsonlTrace] = {}


def trace_to(path: str | os.PathLike[str]) -> JsonlTrace:
    """The trace writing to ``path`` (one per file in a process, so that its chats' lines do not mix)."""
    key = os.path.realpath(path)
    trace = _traces.get(key)
    if trace is None:
        trace = _traces[key] = JsonlTrace(path)
    return trace


def trace_listeners(trace: str | os.PathLike[str] | None) -> list[Listener]:
    """The listeners for a chat entry point's ``trace=`` (none without one)."""
    if trace is None:
        return []
    if not isinstance(trace, str | os.PathLike):
        raise TypeError(f"trace must be the path of a JSONL file, not {trace!r}")
    if not os.fspath(trace):
        raise ValueError("trace must be the path of a JSONL file, not an empty string")
    if os.path.isdir(trace):
        raise ValueError(f"trace must be the path of a JSONL file, not a directory: {os.fspath(trace)!r}")
    return [trace_to(trace)]


def entry_listeners(listeners: Any, trace: str | os.PathLike[str] | None) -> list[Listener]:
    """A chat entry point's ``listeners=`` (checked) and the trace its ``trace=`` names."""
    return [*(checked_listeners(listeners) if listeners else ()), *trace_listeners(trace)]


def environment_trace() -> list[Listener]:
    """The trace ``PARLEY_TRACE`` names, for every chat (none if it is not set)."""
    raw = getattr(os.environ, "_data", None)  # CPython's encoded copy: a lookup without encoding the name
    if raw is not None and _ENCODED_TRACE_VARIABLE not in raw:
        return []
    path = os.environ.get(TRACE_VARIABLE)
    return [trace_to(path)] if path else []


_ENCODED_TRACE_VARIABLE: Any = (
    os.environ.encodekey(TRACE_VARIABLE) if hasattr(os.environ, "encodekey") else TRACE_VARIABLE
)
