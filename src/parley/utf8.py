"""Text that can be written as UTF-8: Python strings may hold lone surrogates (a file name's or a model
reply's undecodable bytes), which no UTF-8 file or database takes; JSON can carry them as escapes."""

from __future__ import annotations

import re

_lone_surrogate = re.compile("[\ud800-\udfff]").search


def is_utf8(text: str) -> bool:
    """Whether ``text`` can be encoded as UTF-8 (it holds no lone surrogate)."""
    return text.isascii() or _lone_surrogate(text) is None
