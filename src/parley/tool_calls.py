"""Running the tool calls of one model message.

The calls run in the order the model made them, with these rules:

- A call whose function takes ``context_variables`` gets its own copy of the context: the chat's context
  with the changes of the context-taking calls before it in the same message. Its changes count only if
  it succeeds. Such calls run one after another, so that each sees a consistent context; there are no
  conflicting writes to resolve.
- Other calls run concurrently where they can: async functions on the event loop, synchronous ones in a
  worker thread in asynchronous chats (unless registered with ``in_thread=False``); synchronous chats call
  synchronous functions directly.
- The context changes of all calls, and the ``context_variables`` their results return, are merged into
  the chat's context in call order once the message's calls are done (a later call's value for a key
  wins); the tool reply that carries the results is what records them.
- The first valid handoff in call order wins; later ones are answered as not taken, invalid ones as errors.

A call whose outcome is already known (recorded before a crash) is not run again.
"""

from __future__ import annotations

import contextvars
import copy
import json
import threading
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from types import MappingProxyType
from typing import Any, TypeVar

from parley.context_variables import ContextVariables
from parley.durable import ChatScope, chat_scope, scoped
from parley.timeouts import NO_LIMIT, ToolTimeout, a_call_with_timeout, call_with_timeout
from parley.tools import Tool, ToolResult

HandoffCheck = Callable[[Any], "str | None"]
"""Says why a handoff a tool asked for cannot be taken, or ``None`` if it can."""

OnExecute = Callable[[str, str, "str | None"], None]
"""Told ``(tool name, arguments as JSON, call id)`` before a tool runs."""

OnOutcome = Callable[[int, "ToolOutcome"], None]
"""Told each call's outcome (by its index in the message) as soon as it is known."""

_NO_CHANGES: Mapping[str, Any] = MappingProxyType({})

T = TypeVar("T")


class ToolOutcome:
    """The result of one tool call: what the model is told, and what the call asks of the chat."""

    __slots__ = (
        "call_id",
        "content",
        "context_removed",
        "context_set",
        "duration_s",
        "error",
        "handoff",
        "name",
        "refused",
    )

    def __init__(
        self,
        call_id: str | None,
        name: str,
        content: str,
        handoff: Any = None,
        context_set: Mapping[str, Any] = _NO_CHANGES,
        context_removed: Sequence[str] = (),
        error: str | None = None,
        duration_s: float = 0.0,
    ) -> None:
        self.call_id = call_id
        self.name = name
        self.content = content
        self.handoff = handoff
        self.context_set = context_set
        self.context_removed = context_removed
        self.error = error
        self.duration_s = duration_s
        self.refused: ValueError | None = None
        """Why the handoff the tool asked for ends the chat (it names no agent of it): raised once the
        tool's result is kept."""

    def as_tool_message(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "tool", "content": self.content}
        if self.call_id is not None:
            message["tool_call_id"] = self.call_id
        return message

    def __repr__(self) -> str:
        return f"ToolOutcome({self.name!r}, {self.content!r:.60})"


_Given = tuple["dict[str, Any] | None", "dict[str, Any] | None"]
"""The context a call is given (its private copy) and the context the copy was made from."""

_NOTHING_GIVEN: _Given = (None, None)

_Call = tuple[int, Tool, "str | None", dict[str, Any], "float | None", "ChatScope | None"]
"""One planned call: its index in the message, the tool, the call's id, its validated arguments, its
time limit, and where the chats it starts get their ids (``None``: from the step's scope)."""


def run_tool_calls(
    tool_calls: Sequence[dict[str, Any]],
    tools: Mapping[str, Tool],
    context_variables: dict[str, Any] | None,
    *,
    on_execute: OnExecute | None = None,
    check_handoff: HandoffCheck | None = None,
    known: Mapping[int, ToolOutcome] | None = None,
    on_outcome: OnOutcome | None = None,
    timeout: float | None = None,
) -> list[ToolOutcome]:
    """Run a message's tool calls (see the module docstring) and return their outcomes in call order.

    Synchronous functions are called directly; async ones run concurrently on a private event loop (in a
    worker thread if this thread already runs one). ``known`` holds outcomes already recorded, by call
    index; ``on_outcome`` is told each new outcome; ``timeout`` is the time limit of tools without their
    own (see :mod:`parley.timeouts`).
    """
    outcomes, planned = _plan_all(tool_calls, tools, known, timeout)
    working = _Working(context_variables, outcomes if known else None)
    later: list[_Call] = []
    timed = on_execute is not None
    for call in planned:
        index, tool = call[0], call[1]
        if tool.is_async:
            if tool.injects_context:
                _finish(outcomes, index, _run_async([call], working, timed)[0], on_outcome)
            else:
                later.append(call)
            continue
        if on_execute is not None:
            _announce(on_execute, call)
        if tool.injects_context:
            outcome = _invoke(call, working.context_for(tool), timed)
            working.took(outcome)
        else:
            outcome = _invoke(call, _NOTHING_GIVEN, timed)
        _finish(outcomes, index, outcome, on_outcome)
    if later:
        if on_execute is not None:
            for call in later:
                _announce(on_execute, call)
        for call, outcome in zip(later, _run_async(later, working, timed), strict=True):
            _finish(outcomes, call[0], outcome, on_outcome)
    return _resolve_handoffs(outcomes, check_handoff)


async def run_only_call(
    tool_call: dict[str, Any],
    tools: Mapping[str, Tool],
    context_variables: dict[str, Any] | None,
    check_handoff: HandoffCheck | None,
    timeout: float | None,
    on_execute: OnExecute | None,
    *,
    sync: bool,
) -> ToolOutcome:
    """The outcome of a message's only tool call, with nothing recorded: what :func:`run_tool_calls`
    (``sync``: the coroutine then never suspends) or :func:`a_run_tool_calls` returns for
    ``[tool_call]``, without their bookkeeping for several calls."""
    call = _only_call(tool_call, tools, timeout, sync=sync)
    if call is None:
        options: dict[str, Any] = {
            "on_execute": on_execute,
            "check_handoff": check_handoff,
            "timeout": timeout,
        }
        if sync:
            return run_tool_calls([tool_call], tools, context_variables, **options)[0]
        return (await a_run_tool_calls([tool_call], tools, context_variables, **options))[0]
    if on_execute is not None:
        _announce(on_execute, call)
    given, timed = _given(call[1], context_variables), on_execute is not None
    outcome = _invoke(call, given, timed) if sync else await _a_invoke(call, given, timed)
    return _only_handoff(outcome, check_handoff)


def _only_call(
    tool_call: dict[str, Any], tools: Mapping[str, Tool], timeout: float | None, *, sync: bool
) -> _Call | None:
    """A message's only call, planned; ``None`` if it needs :func:`run_tool_calls`' handling: an unknown
    tool, arguments that do not validate, or (``sync``) an async function."""
    function = tool_call.get("function") or {}
    tool = tools.get(function.get("name") or "")
    if tool is None or (sync and tool.is_async):
        return None
    try:
        arguments = tool.parse_arguments(function.get("arguments"))
    except ValueError:
        return None
    limit = timeout if tool.timeout is None else tool.timeout
    return (0, tool, tool_call.get("id"), arguments, None if limit == NO_LIMIT else limit, None)


def _given(tool: Tool, context: dict[str, Any] | None) -> _Given:
    """A private copy of ``context`` for a call of ``tool``, and the context it was copied from (to tell
    the call's changes by); ``(None, None)`` if the tool does not take the context."""
    if not tool.injects_context:
        return _NOTHING_GIVEN
    if context is None:
        return {}, {}
    return private_copy(context), context


def _only_handoff(outcome: ToolOutcome, check_handoff: HandoffCheck | None) -> ToolOutcome:
    """The outcome of a message's only call, its handoff an error if it cannot be taken."""
    if outcome.handoff is not None:
        _drop_invalid_handoff(outcome, check_handoff)
    return outcome


def _drop_invalid_handoff(outcome: ToolOutcome, check_handoff: HandoffCheck | None) -> None:
    """Make the handoff ``outcome`` asks for an error the model is told, if the chat cannot take it (or
    :attr:`ToolOutcome.refused`, if it ends the chat)."""
    try:
        problem = check_handoff(outcome.handoff) if check_handoff is not None else None
    except ValueError as error:
        outcome.handoff = None
        outcome.refused = error
        return
    if problem is not None:
        outcome.content = handoff_refused(outcome.name, problem)
        outcome.handoff = None


def handoff_refused(tool: str, problem: str) -> str:
    """What the model is told when the handoff ``tool`` asked for cannot be taken."""
    return f"Error: {tool} cannot hand off: {problem}"


async def a_run_tool_calls(
    tool_calls: Sequence[dict[str, Any]],
    tools: Mapping[str, Tool],
    context_variables: dict[str, Any] | None,
    *,
    on_execute: OnExecute | None = None,
    check_handoff: HandoffCheck | None = None,
    known: Mapping[int, ToolOutcome] | None = None,
    on_outcome: OnOutcome | None = None,
    timeout: float | None = None,
) -> list[ToolOutcome]:
    """Like :func:`run_tool_calls`, on the running event loop: async functions and synchronous ones in
    worker threads run concurrently; context-taking calls one after another, in call order."""
    import asyncio

    outcomes, planned = _plan_all(tool_calls, tools, known, timeout)
    working = _Working(context_variables, outcomes if known else None)
    concurrent: list[asyncio.Future[ToolOutcome]] = []
    timed = on_execute is not None
    for call in planned:
        index, tool = call[0], call[1]
        if on_execute is not None:
            _announce(on_execute, call)
        if tool.injects_context:
            outcome = await _a_invoke(call, working.context_for(tool), timed)
            working.took(outcome)
            _finish(outcomes, index, outcome, on_outcome)
        elif tool.is_async or tool.in_thread:
            concurrent.append(asyncio.ensure_future(_a_report(call, outcomes, on_outcome, timed)))
        else:
            _finish(outcomes, index, _invoke(call, _NOTHING_GIVEN, timed), on_outcome)
    if concurrent:
        await asyncio.gather(*concurrent)
    return _resolve_handoffs(outcomes, check_handoff)


def _plan_all(
    tool_calls: Sequence[dict[str, Any]],
    tools: Mapping[str, Tool],
    known: Mapping[int, ToolOutcome] | None,
    timeout: float | None,
) -> tuple[list[ToolOutcome | None], list[_Call]]:
    """The calls to run, and a list of outcomes with those of the others (recorded, or errors) filled in."""
    outcomes: list[ToolOutcome | None] = []
    planned: list[_Call] = []
    step = chat_scope.get() if len(tool_calls) > 1 else None
    for index, call in enumerate(tool_calls):
        recorded = known.get(index) if known else None
        if recorded is not None:
            outcomes.append(recorded)
            continue
        call_id = call.get("id")
        function = call.get("function") or {}
        name = function.get("name") or ""
        tool = tools.get(name)
        if tool is None:
            available = ", ".join(sorted(tools)) or "none"
            message = f"Error: Function {name} not found. Available tools: {available}."
            outcomes.append(ToolOutcome(call_id, name, message, error=message))
            continue
        try:
            arguments = tool.parse_arguments(function.get("arguments"))
        except ValueError as error:
            message = f"Error: invalid arguments for {name}: {error}"
            outcomes.append(ToolOutcome(call_id, name, message, error=message))
            continue
        outcomes.append(None)
        limit = timeout if tool.timeout is None else tool.timeout
        # the chats each call starts are told apart by the call, not by the order they start in (a re-run
        # runs only the calls whose outcomes were not recorded)
        scope = None if step is None else step.within(f"{step.prefix}:{index + 1}")
        planned.append((index, tool, call_id, arguments, None if limit == NO_LIMIT else limit, scope))
    return outcomes, planned


def _announce(on_execute: OnExecute, call: _Call) -> None:
    on_execute(call[1].name, json.dumps(call[3], default=str), call[2])


def _finish(
    outcomes: list[ToolOutcome | None], index: int, outcome: ToolOutcome, on_outcome: OnOutcome | None
) -> None:
    outcomes[index] = outcome
    if on_outcome is not None:
        on_outcome(index, outcome)


class _Working:
    """The context as the context-taking calls of one message see it, call after call."""

    __slots__ = ("_base", "_changed")

    def __init__(self, base: dict[str, Any] | None, known: list[ToolOutcome | None] | None = None) -> None:
        self._base = base
        self._changed: dict[str, Any] | None = None
        for outcome in known or ():
            if outcome is not None and (outcome.context_set or outcome.context_removed):
                self._apply(outcome)

    def context_for(self, tool: Tool) -> _Given:
        """What a call of ``tool`` is given (see :func:`_given`) of the context as it is now."""
        return _given(tool, self._changed if self._changed is not None else self._base)

    def took(self, outcome: ToolOutcome) -> None:
        """Keep the changes of a call that succeeded for the calls after it."""
        if outcome.error is None and (outcome.context_set or outcome.context_removed):
            self._apply(outcome)

    def _apply(self, outcome: ToolOutcome) -> None:
        if self._changed is None:
            self._changed = copy.copy(self._base) if self._base is not None else {}
        self._changed.update(outcome.context_set)
        for key in outcome.context_removed:
            self._changed.pop(key, None)


def _invoke(call: _Call, given: _Given, timed: bool) -> ToolOutcome:
    _, tool, call_id, arguments, timeout, scope = call
    if scope is not None:
        with scoped(scope):
            return _invoke((*call[:5], None), given, timed)
    context, before = given
    started = time.perf_counter() if timed else 0.0
    try:
        if timeout is None:
            result = tool.func(**tool.call_arguments(arguments, context, call_id))
        else:
            result = call_with_timeout(tool.func, tool.call_arguments(arguments, context, call_id), timeout)
    except Exception as error:
        return _failure(call, error, started)
    return _outcome(call, result, context, before, started)


async def _a_invoke(call: _Call, given: _Given, timed: bool) -> ToolOutcome:
    _, tool, call_id, arguments, timeout, scope = call
    if scope is not None:
        with scoped(scope):
            return await _a_invoke((*call[:5], None), given, timed)
    if not tool.is_async and not (tool.in_thread and timeout is not None):
        if tool.in_thread:
            return await _in_thread(call, given, timed)
        return _invoke(call, given, timed)
    context, before = given
    started = time.perf_counter() if timed else 0.0
    try:
        kwargs = tool.call_arguments(arguments, context, call_id)
        if timeout is None:
            result = await tool.func(**kwargs)
        else:
            result = await a_call_with_timeout(tool.func, kwargs, timeout, is_async=tool.is_async)
    except Exception as error:
        return _failure(call, error, started)
    return _outcome(call, result, context, before, started)


async def _a_report(
    call: _Call, outcomes: list[ToolOutcome | None], on_outcome: OnOutcome | None, timed: bool
) -> ToolOutcome:
    outcome = await _a_invoke(call, _NOTHING_GIVEN, timed)
    _finish(outcomes, call[0], outcome, on_outcome)
    return outcome


async def _in_thread(call: _Call, given: _Given, timed: bool) -> ToolOutcome:
    import asyncio

    return await asyncio.to_thread(_invoke, call, given, timed)


_ATOMIC = frozenset({str, int, float, bool, type(None), bytes})


_OWN_COPY = frozenset({dict, ContextVariables})
"""Context types whose ``copy()`` keeps their type (``copy.copy`` gets there the long way)."""


def private_copy(context: dict[str, Any]) -> dict[str, Any]:
    """A copy of the context that a tool may change, nested values included, without touching the chat's
    (values that cannot be deep-copied are shared)."""
    copied = context.copy() if type(context) in _OWN_COPY else copy.copy(context)
    for key, value in context.items():
        if type(value) not in _ATOMIC:
            copied[key] = _deep(value)
    return copied


def _deep(value: Any) -> Any:
    kind = type(value)
    if kind in _ATOMIC:
        return value
    if kind is dict:
        return {key: _deep(item) for key, item in value.items()}
    if kind is list:
        return [_deep(item) for item in value]
    try:
        return copy.deepcopy(value)
    except Exception:
        return value


def _failure(call: _Call, error: Exception, started: float) -> ToolOutcome:
    name = call[1].name
    if isinstance(error, ToolTimeout):
        message = f"Error: {name} timed out: {error}"
    else:
        message = f"Error: {name} raised {type(error).__name__}: {error}"
    duration = time.perf_counter() - started if started else 0.0
    return ToolOutcome(call[2], name, message, error=message, duration_s=duration)


def _outcome(
    call: _Call, result: Any, context: dict[str, Any] | None, before: dict[str, Any] | None, started: float
) -> ToolOutcome:
    duration = time.perf_counter() - started if started else 0.0
    context_set: Mapping[str, Any] = _NO_CHANGES
    context_removed: Sequence[str] = ()
    if context is not None and before is not None and not _unchanged(before, context):
        context_set = {
            key: value for key, value in context.items() if key not in before or not _same(before[key], value)
        }
        context_removed = [key for key in before if key not in context]
    handoff = None
    if type(result) is str:
        content = result
    elif isinstance(result, ToolResult):
        returned = result.result_context()
        if returned and returned is not context:
            if context_set or context_removed:
                context_set = {**context_set, **returned}
                context_removed = [key for key in context_removed if key not in returned]
            else:  # the common case: the call changed nothing in its copy of the context
                context_set = {**returned}
        content = result.result_text()
        handoff = result.result_handoff()
    elif getattr(result, "_is_handoff_target", False):
        content = f"Transferred to {_target_name(result)}."
        handoff = result
    else:
        content = result_text(result)
    return ToolOutcome(call[2], call[1].name, content, handoff, context_set, context_removed, None, duration)


def _unchanged(before: dict[str, Any], context: dict[str, Any]) -> bool:
    """Whether a call left its copy of the context as it was: the same keys, each value :func:`_same` as
    before (the common case, told in one comparison)."""
    try:
        return dict.__eq__(before, context) is True
    except Exception:  # a value that cannot be compared: each one is looked at
        return False


def _same(old: Any, new: Any) -> bool:
    if old is new:
        return True
    try:
        return bool(old == new)
    except Exception:
        return False


def result_text(result: Any) -> str:
    """What the model is told a tool returned, as AG2 tells it: text as it is, a pydantic model as its
    JSON, anything else as ``str()`` gives it (``{'k': 'v'}``, ``None``)."""
    if isinstance(result, str):
        return result
    model_dump_json = getattr(result, "model_dump_json", None)
    if callable(model_dump_json) and not isinstance(result, type):
        return str(model_dump_json())
    return str(result)


def _target_name(target: Any) -> str:
    display_name = getattr(target, "display_name", None)
    if callable(display_name):
        return str(display_name())
    return str(getattr(target, "name", target))


def _resolve_handoffs(
    outcomes: list[ToolOutcome | None], check_handoff: HandoffCheck | None
) -> list[ToolOutcome]:
    """Invalid handoffs become errors; the first valid one wins; later ones are answered as not taken."""
    taken: ToolOutcome | None = None
    done: list[ToolOutcome] = []
    for outcome in outcomes:
        if outcome is None:
            raise RuntimeError("a tool call was left without an outcome")
        done.append(outcome)
        if outcome.handoff is None:
            continue
        _drop_invalid_handoff(outcome, check_handoff)
        if outcome.handoff is None:
            continue
        if taken is None:
            taken = outcome
            continue
        outcome.content = (
            f"Not transferred to {_target_name(outcome.handoff)}: an earlier call in the same message "
            f"({taken.name}) already handed off to {_target_name(taken.handoff)}."
        )
        outcome.handoff = None
    return done


def _run_async(calls: list[_Call], working: _Working, timed: bool) -> list[ToolOutcome]:
    """Run async calls concurrently on a private event loop; in a worker thread if this thread has a
    running loop already. The current context (the chat being served) goes with them."""
    import asyncio

    async def gather_in_order() -> list[ToolOutcome]:
        pending = {
            call[0]: asyncio.ensure_future(_a_invoke(call, _NOTHING_GIVEN, timed))
            for call in calls
            if not call[1].injects_context
        }
        results: list[ToolOutcome] = []
        for call in calls:
            task = pending.get(call[0])
            if task is not None:
                results.append(await task)
                continue
            outcome = await _a_invoke(call, working.context_for(call[1]), timed)
            working.took(outcome)
            results.append(outcome)
        return results

    return on_private_loop(gather_in_order())


def on_private_loop(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` to its end on an event loop of its own, from sync code: in a worker thread if
    this thread has a running loop already. The current context (the chat being served) goes with it."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    results: list[T] = []
    failure: list[BaseException] = []
    context = contextvars.copy_context()

    def worker() -> None:
        try:
            results.append(context.run(asyncio.run, coroutine))
        except BaseException as error:
            failure.append(error)

    thread = threading.Thread(target=worker, name="parley-tools")
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return results[0]
