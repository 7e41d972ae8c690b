"""``ContextVariables`` (defined in :mod:`parley.context_variables`), where AG2's group API has it."""

from parley.context_variables import ContextVariables

__all__ = ["ContextVariables"]
