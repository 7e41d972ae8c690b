"""Nested chats: a queue of chats an agent runs to produce one reply, and the carryover between chats."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING, Any

from parley.coroutines import run_sync
from parley.exceptions import InvalidCarryOverTypeError
from parley.messages import Message, content_str
from parley.summary import summarize_with_model

if TYPE_CHECKING:
    import asyncio

    from parley.agent import Agent, ConversableAgent
    from parley.chat_result import ChatResult
    from parley.durable import ChatScope

CARRYOVER_METHODS = ("all", "last_msg", "reflection_with_llm")


def process_nested_chat_carryover(
    chat: dict[str, Any],
    recipient: ConversableAgent,
    messages: list[Message],
    sender: Agent | None,
    trim_n_messages: int = 0,
) -> None:
    """Put the parent chat's messages into ``chat["message"]`` as context, per ``chat["carryover_config"]``.

    ``carryover_config["summary_method"]`` is ``"all"`` (every message's text), ``"last_msg"`` (the last
    one's), ``"reflection_with_llm"`` (a summary by the nested recipient's model, with
    ``summary_args["summary_prompt"]``) or a callable ``(agent, messages[, summary_args]) -> str``. The
    latest ``trim_n_messages`` messages of the list are left out first (0 leaves out nothing); then the
    first three methods read the messages that have text, and a callable gets them all. The result is
    ``"<message>\\nContext:\\n<carryover>"``.
    """
    config = chat.get("carryover_config")
    if not isinstance(config, dict) or "summary_method" not in config:
        raise ValueError("chat['carryover_config'] must be a dict with a 'summary_method'")
    if isinstance(trim_n_messages, bool) or not isinstance(trim_n_messages, int) or trim_n_messages < 0:
        raise ValueError(f"trim_n_messages must be a non-negative int, not {trim_n_messages!r}")
    method = config["summary_method"]
    summary_args = config.get("summary_args") or {}
    trimmed = messages[:-trim_n_messages] if trim_n_messages else list(messages)
    kept = [message for message in trimmed if message.get("content") is not None]
    if method == "all":
        carryover = "\n".join(content_str(message["content"]) for message in kept)
    elif method == "last_msg":
        carryover = content_str(kept[-1]["content"]) if kept else ""
    elif method == "reflection_with_llm":
        model_agent = chat.get("recipient") or recipient
        carryover = run_sync(
            summarize_with_model(
                kept,
                summary_args,
                model_of=model_agent,
                fallback=recipient,
                no_model="carryover summary_method 'reflection_with_llm' needs a model, but "
                f"{model_agent.name} has none",
                sync=True,
            )
        )
    elif callable(method):
        arguments = [recipient, trimmed, summary_args]
        carryover = str(method(*arguments[: _arity(method, 2, 3)]))
    else:
        raise ValueError(
            f"unknown carryover summary_method {method!r}; use one of {CARRYOVER_METHODS} or a callable"
        )
    message = chat.get("message", "")
    if callable(message):
        message = message(recipient, messages, sender, None)
    chat["message"] = f"{message}\nContext:\n{carryover}" if message else f"Context:\n{carryover}"


def _arity(function: Callable[..., Any], low: int, high: int) -> int:
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return high
    if any(p.kind is p.VAR_POSITIONAL for p in parameters):
        return high
    return max(
        low, min(high, len([p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]))
    )


# ----------------------------------------------------------------------------------------------------
# chat queues


def initiate_chats(
    chat_queue: list[dict[str, Any]],
    *,
    store: Any = None,
    chat_id: str | None = None,
    trace: str | os.PathLike[str] | None = None,
) -> list[ChatResult]:
    """Run chats one after another; each gets the summaries of the earlier ones as ``carryover``.

    Each entry holds ``initiate_chat``'s arguments plus ``sender`` and ``recipient``; or, to run a swarm,
    ``"swarm": {initiate_swarm_chat's arguments but messages}`` with ``message``. An entry's
    ``chat_id`` and ``prerequisites`` are :func:`a_initiate_chats`'s (here the chats run in order). With
    ``store``, every chat of the queue is durable, with the ids ``chat_id``, ``chat_id.2``,
    ``chat_id.3``...: re-running the queue after a crash returns the finished chats' results and
    continues the unfinished one. ``trace`` traces every chat of the queue that names no trace of its
    own.
    """
    queue = _traced(checked_queue(chat_queue), trace)
    with _queue_scope(store, chat_id):
        return run_sync(run_queue(queue, sync=True))


async def a_initiate_chats(
    chat_queue: list[dict[str, Any]],
    *,
    store: Any = None,
    chat_id: str | None = None,
    trace: str | os.PathLike[str] | None = None,
) -> dict[Any, ChatResult]:
    """Run a queue of chats on the event loop, as AG2's ``a_initiate_chats`` does: every entry has a
    ``chat_id``; a chat starts once the chats its ``prerequisites`` name have finished, with their
    summaries as ``carryover`` (less those of ``finished_chat_indexes_to_exclude_from_carryover``, by
    chat id), and chats that do not wait on each other run at the same time. Returns
    ``{chat_id: ChatResult}``. ``store``, ``chat_id`` and ``trace`` are as for :func:`initiate_chats`.
    """
    import asyncio  # here, so that importing parley does not load it

    entries = _traced(checked_queue(chat_queue), trace)
    with _queue_scope(store, chat_id):
        order = _prerequisite_order(entries)
        scopes = _entry_scopes(len(entries))
        tasks: dict[Any, asyncio.Task[ChatResult]] = {}
        for index in order:
            entry = entries[index]
            waits_on = {earlier: tasks[earlier] for earlier in entry.get("prerequisites", ())}
            tasks[entry["chat_id"]] = asyncio.ensure_future(_after(waits_on, entry, index, scopes[index]))
        await asyncio.gather(*tasks.values())
        return {queue_id: task.result() for queue_id, task in tasks.items()}


def _traced(queue: list[dict[str, Any]], trace: str | os.PathLike[str] | None) -> list[dict[str, Any]]:
    """The queue with ``trace`` given to each chat (a swarm's, in its arguments) that names none."""
    if trace is None:
        return queue
    traced = []
    for entry in queue:
        if "swarm" in entry and isinstance(entry["swarm"], dict):
            entry = (
                entry if "trace" in entry["swarm"] else {**entry, "swarm": {**entry["swarm"], "trace": trace}}
            )
        elif "trace" not in entry:
            entry = {**entry, "trace": trace}
        traced.append(entry)
    return traced


def _entry_scopes(entries: int) -> list[ChatScope | None]:
    """Where each entry's chat is kept, when chats are durable here: ids given out in queue order, as
    :func:`initiate_chats` gives them, not in the order the chats happen to start (which a re-run, its
    finished chats returning at once, does not repeat)."""
    from parley.durable import chat_scope

    scope = chat_scope.get()
    if scope is None or scope.store is None:
        return [None] * entries
    return [scope.within(scope.next_id()) for _ in range(entries)]


async def _after(
    waits_on: dict[Any, asyncio.Task[ChatResult]],
    entry: dict[str, Any],
    index: int,
    scope: ChatScope | None,
) -> ChatResult:
    """Run ``entry``'s chat once the chats it waits on have finished, with their summaries as carryover."""
    excluded = set(entry.get("finished_chat_indexes_to_exclude_from_carryover", ()))
    carried = [(await task).summary for queue_id, task in waits_on.items() if queue_id not in excluded]
    from parley.durable import scoped

    with nullcontext() if scope is None else scoped(scope):
        return await _run_chat(entry, index, carried, sync=False)


def _prerequisite_order(entries: list[dict[str, Any]]) -> list[int]:
    """The entries' indexes in an order where every chat comes after its prerequisites.

    Raises:
        ValueError: an entry has no ``chat_id``, two share one, a prerequisite names no chat of the
            queue, or the prerequisites go round in a circle.
    """
    by_id: dict[Any, int] = {}
    for index, entry in enumerate(entries):
        if "chat_id" not in entry:
            raise ValueError(
                f"chat_queue[{index}] needs a 'chat_id': a_initiate_chats tells its chats apart by it"
            )
        if entry["chat_id"] in by_id:
            raise ValueError(f"chat_queue[{index}] repeats the chat_id {entry['chat_id']!r}")
        by_id[entry["chat_id"]] = index
    for index, entry in enumerate(entries):
        unknown = [p for p in entry.get("prerequisites", ()) if p not in by_id]
        if unknown:
            raise ValueError(f"chat_queue[{index}]'s prerequisites {unknown} name no chat_id of the queue")
    order: list[int] = []
    placed: set[int] = set()
    while len(order) < len(entries):
        ready = [
            index
            for index, entry in enumerate(entries)
            if index not in placed and all(by_id[p] in placed for p in entry.get("prerequisites", ()))
        ]
        if not ready:
            waiting = [entries[i]["chat_id"] for i in range(len(entries)) if i not in placed]
            raise ValueError(f"the prerequisites of the chats {waiting} go round in a circle")
        order.extend(ready)
        placed.update(ready)
    return order


async def _run_chat(entry: dict[str, Any], index: int, carried: list[str], *, sync: bool) -> ChatResult:
    """Run one chat of a queue, with ``carried`` summaries of earlier chats as its carryover."""
    kind, arguments = _prepared(entry, index, [summary for summary in carried if summary])
    if kind == "swarm":
        from parley.swarm import a_initiate_swarm_chat, initiate_swarm_chat

        call = _swarm_call(arguments)
        result, _, _ = initiate_swarm_chat(**call) if sync else await a_initiate_swarm_chat(**call)
        return result
    sender = arguments.pop("sender")
    return sender.initiate_chat(**arguments) if sync else await sender.a_initiate_chat(**arguments)


async def run_queue(chat_queue: list[dict[str, Any]], *, sync: bool) -> list[ChatResult]:
    """The chats of a queue, one after another (:func:`initiate_chats`), sync or async."""
    finished: list[ChatResult] = []
    for index, entry in enumerate(chat_queue):
        excluded = set(
            check_queue_entry(entry, index).get("finished_chat_indexes_to_exclude_from_carryover", ())
        )
        carried = [result.summary for i, result in enumerate(finished) if i not in excluded]
        finished.append(await _run_chat(entry, index, carried, sync=sync))
    return finished


@contextmanager
def _queue_scope(store: Any, chat_id: str | None) -> Iterator[None]:
    if store is None and chat_id is None:
        yield
        return
    if store is None:
        raise ValueError("initiate_chats(chat_id=...) needs a store= to keep the chats in")
    from parley.durable import ChatScope, open_store, scoped
    from parley.engine import new_chat_id
    from parley.store.base import check_chat_id

    queue_id = new_chat_id() if chat_id is None else check_chat_id(chat_id)
    with scoped(ChatScope(open_store(store), queue_id)):
        yield


def checked_queue(chat_queue: Any) -> list[dict[str, Any]]:
    """``chat_queue``, which must be a list (or tuple) of dicts (chats' arguments), as a list."""
    if not isinstance(chat_queue, list | tuple):
        raise TypeError(f"chat_queue must be a list of chats (dicts), not {type(chat_queue).__name__}")
    return [check_queue_entry(entry, index) for index, entry in enumerate(chat_queue)]


def check_queue_entry(entry: Any, index: int) -> dict[str, Any]:
    """``chat_queue[index]``, which must be a dict (a chat's arguments)."""
    if not isinstance(entry, dict):
        raise TypeError(f"chat_queue[{index}] must be a dict, not {entry!r:.80}")
    return entry


def _prepared(entry: dict[str, Any], index: int, carried: list[str]) -> tuple[str, dict[str, Any]]:
    """What runs ``entry``: a chat's or a swarm's arguments, with ``carried`` summaries as carryover."""
    arguments = dict(check_queue_entry(entry, index))
    carryover = arguments.pop("carryover", [])
    if not isinstance(carryover, str | list):
        raise InvalidCarryOverTypeError(
            f"chat_queue[{index}]'s carryover must be a string or a list, not {type(carryover).__name__}"
        )
    carryover = [carryover] if isinstance(carryover, str) else list(carryover)
    carryover += carried
    for queue_key in (
        "finished_chat_indexes_to_exclude_from_carryover",
        "carryover_config",
        "chat_id",
        "prerequisites",
    ):
        arguments.pop(queue_key, None)
    if "swarm" in arguments:
        if carryover:
            arguments["message"] = _with_context(arguments.get("message") or "", carryover)
        return "swarm", arguments
    for key in ("sender", "recipient"):
        if key not in arguments:
            raise ValueError(f"chat_queue[{index}] needs a '{key}'")
    if carryover:
        arguments["carryover"] = carryover
    return "chat", arguments


def _with_context(message: str, carryover: list[Any]) -> str:
    return f"{message}\nContext: \n" + "\n".join(str(item) for item in carryover)


def _swarm_call(arguments: dict[str, Any]) -> dict[str, Any]:
    swarm = dict(arguments["swarm"])
    swarm.setdefault("silent", arguments.get("silent", False))
    swarm["messages"] = arguments.get("message") or swarm.get("messages")
    if not swarm["messages"]:
        raise ValueError("a nested swarm needs a 'message'")
    return swarm


# ----------------------------------------------------------------------------------------------------
# nested chats as a reply


def register_nested_chats(
    agent: ConversableAgent,
    chat_queue: list[dict[str, Any]],
    trigger: Any,
    position: int = 1,
    use_async: bool | None = None,
    reply_func: Callable[..., Any] | None = None,
    config: Any = None,
    reset_config: Callable[[Any], None] | None = None,
    ignore_async_in_sync_chat: bool | None = None,
) -> None:
    """Make ``agent`` reply, to senders matching ``trigger``, with the summary of ``chat_queue``.

    The chats run in order (see :func:`initiate_chats`); a chat without ``message`` starts from the
    last message received, and a ``carryover_config`` on the first chat adds the parent chat as context
    (:func:`process_nested_chat_carryover`, with its ``trim_n_messages``). By default the nested chats
    answer right after the termination and human check. ``config`` and ``reset_config`` are the reply
    function's (see ``register_reply``); ``ignore_async_in_sync_chat`` applies without ``use_async``.
    """
    options = {"config": config, "reset_config": reset_config}
    ignore_async = not use_async if use_async is not None else bool(ignore_async_in_sync_chat)
    if not isinstance(chat_queue, list) or not chat_queue:
        raise ValueError("chat_queue must be a non-empty list of chats")
    for index, entry in enumerate(chat_queue):
        if "recipient" not in check_queue_entry(entry, index) and "swarm" not in entry:
            raise ValueError(f"chat_queue[{index}] needs a 'recipient'")
        if use_async and "chat_id" not in entry:
            raise ValueError(
                f"chat_queue[{index}] needs a 'chat_id': use_async runs the chats by a_initiate_chats"
            )

    if reply_func is not None:
        _register_own_nested_reply(
            agent, chat_queue, trigger, position, use_async, reply_func, options, ignore_async
        )
        return

    def summary_from_nested_chats(
        recipient: ConversableAgent,
        messages: list[Message] | None = None,
        sender: Agent | None = None,
        config: Any = None,
    ) -> tuple[bool, str | None]:
        queue = _queue_for(chat_queue, recipient, messages or [], sender, config)
        if not queue:
            return True, None
        return True, run_sync(run_queue(queue, sync=True))[-1].summary

    async def a_summary_from_nested_chats(
        recipient: ConversableAgent,
        messages: list[Message] | None = None,
        sender: Agent | None = None,
        config: Any = None,
    ) -> tuple[bool, str | None]:
        queue = _queue_for(chat_queue, recipient, messages or [], sender, config)
        if not queue:
            return True, None
        if use_async:  # AG2's: the chats run by a_initiate_chats, the last one's summary the reply
            return True, (await a_initiate_chats(queue))[queue[-1]["chat_id"]].summary
        return True, (await run_queue(queue, sync=False))[-1].summary

    agent.register_reply(
        trigger,
        a_summary_from_nested_chats if use_async else summary_from_nested_chats,
        position=position,
        async_twin=None if use_async else a_summary_from_nested_chats,
        ignore_async_in_sync_chat=False,  # with use_async, a sync chat is an error, as in AG2
        **options,
    )


def _register_own_nested_reply(
    agent: ConversableAgent,
    chat_queue: list[dict[str, Any]],
    trigger: Any,
    position: int,
    use_async: bool | None,
    reply_func: Callable[..., Any],
    options: dict[str, Any],
    ignore_async: bool,
) -> None:
    """Register AG2's own ``reply_func_from_nested_chats``: called with the queue and the reply's
    arguments, it runs the chats as it wants and returns ``(final, reply)``."""
    if use_async:
        if not inspect.iscoroutinefunction(reply_func):
            raise ValueError("with use_async, reply_func_from_nested_chats must be a coroutine function")

        async def a_reply(
            recipient: ConversableAgent, messages: Any = None, sender: Any = None, config: Any = None
        ) -> Any:
            return await reply_func(chat_queue, recipient, messages, sender, config)

        agent.register_reply(trigger, a_reply, position=position, ignore_async_in_sync_chat=False, **options)
        return

    if inspect.iscoroutinefunction(reply_func):

        async def a_own_reply(
            recipient: ConversableAgent, messages: Any = None, sender: Any = None, config: Any = None
        ) -> Any:
            return await reply_func(chat_queue, recipient, messages, sender, config)

        agent.register_reply(
            trigger, a_own_reply, position=position, ignore_async_in_sync_chat=ignore_async, **options
        )
        return

    def reply(
        recipient: ConversableAgent, messages: Any = None, sender: Any = None, config: Any = None
    ) -> Any:
        return reply_func(chat_queue, recipient, messages, sender, config)

    agent.register_reply(trigger, reply, position=position, **options)


def _queue_for(
    chat_queue: list[dict[str, Any]],
    recipient: ConversableAgent,
    messages: list[Message],
    sender: Agent | None,
    config: Any,
) -> list[dict[str, Any]]:
    """The chats to run for a reply: each message made (a callable is given the reply function's
    arguments, its ``config`` included, as in AG2), the first one with its carryover."""
    queue: list[dict[str, Any]] = []
    for index, entry in enumerate(chat_queue):
        chat = dict(entry)
        chat.setdefault("sender", recipient)
        if callable(chat.get("message")):
            chat["message"] = chat["message"](recipient, messages, sender, config)
        if index == 0 and "carryover_config" in chat:
            process_nested_chat_carryover(
                chat,
                recipient,
                messages,
                sender,
                trim_n_messages=chat.pop("trim_n_messages", 0),
            )
        message = chat.get("message")
        if message is None and index == 0 and messages:
            message = messages[-1].get("content")
        if message:
            chat["message"] = message
            queue.append(chat)
    return queue
