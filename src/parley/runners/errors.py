"""Errors an item's outcome can hold besides the ones ``fn`` raised."""

from __future__ import annotations


class RemoteItemError(Exception):
    """An item failed on a Ray actor with an exception that could not be sent back as itself (it could
    not be pickled, or not rebuilt here): its type and message, as text; the outcome's ``traceback``
    has the rest."""


class ItemLostError(RuntimeError):
    """The Ray actors that ran an item died each time (a killed process, a lost node) and the item was
    given up after ``RayRunner.max_attempts`` starts; the last death is the ``__cause__``."""


class UnsendableError(TypeError):
    """Something that must cross to or from a Ray actor cannot be pickled."""
