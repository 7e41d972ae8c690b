"""Many chats at once: :func:`run_many` runs a function over many inputs on one event loop
(``runner="local"``) or on Ray actors (``runner="ray"``); the engine never knows which."""

from parley.runners.api import a_run_many, run_many
from parley.runners.outcome import Outcome
from parley.runners.ray_config import RayRunner

__all__ = ["Outcome", "RayRunner", "a_run_many", "run_many"]
