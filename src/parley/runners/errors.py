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


class BatchStopped(RuntimeError):
    """``fn`` raised a ``BaseException`` that is not an ``Exception`` (``SystemExit``,
    ``KeyboardInterrupt``, a cancellation) on a Ray actor: as on one event loop, it stops the batch; it
    is raised by ``run_many`` naming the item and what was raised."""


class BatchInterrupted(Exception):
    """The batch stopped (Ctrl-C, a cancellation, another item's exit) while this item's chat ran in a
    thread, which cannot be interrupted: the chat stops at its next step instead, its records kept for
    a re-run to continue."""
