"""Decoding JSON text as ``json.loads`` does, quicker for the text parley and models mostly write."""

from __future__ import annotations

import json
from typing import Any

_DECODER = json.JSONDecoder()


def loads(text: str) -> Any:
    """``json.loads(text)``: one JSON value with nothing around it (a record as parley writes it, tool
    arguments as models write them) is decoded without looking for whitespace first; any other text,
    valid or not, goes to ``json.loads``, with its result and its error messages."""
    try:
        value, end = _DECODER.raw_decode(text)
    except ValueError:
        return json.loads(text)
    return value if end == len(text) else json.loads(text)
