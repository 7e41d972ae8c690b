"""Nested chats: a queue of chats an agent runs to produce one reply, and the carryover between chats."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from parley.coroutines import run_sync
from parley.messages import Message, content_str
from parley.summary import summarize_with_model

if TYPE_CHECKING:
    from parley.agent import Agent, ConversableAgent
    from parley.chat_result import ChatResult

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
    latest ``trim_n_messages`` messages are left out first (0 leaves out nothing). The result is
    ``"<message>\\nContext:\\n<carryover>"``.
    """
    config = chat.get("carryover_config")
    if not isinstance(config, dict) or "summary_method" not in config:
        raise ValueError("chat['carryover_config'] must be a dict with a 'summary_method'")
    if isinstance(trim_n_messages, bool) or not isinstance(trim_n_messages, int) or trim_n_messages < 0:
        raise ValueError(f"trim_n_messages must be a non-negative int, not {trim_n_messages!r}")
    method = config["summary_method"]
    summary_args = config.get("summary_args") or {}
    kept = [message for message in messages if message.get("content") is not None]
    if trim_n_messages:
        kept = kept[:-trim_n_messages]
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
        arguments = [recipient, kept, summary_args]
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
    chat_queue: list[dict[str, Any]], *, store: Any = None, chat_id: str | None = None
) -> list[ChatResult]:
    """Run chats one after another; each gets the summaries of the earlier ones as ``carryover``.

    Each entry holds ``initiate_chat``'s arguments plus ``sender`` and ``recipient``; or, to run a swarm,
    ``"swarm": {initiate_swarm_chat's arguments but messages}`` with ``message``. With ``store``, every
    chat of the queue is durable, with the ids ``chat_id``, ``chat_id.2``, ``chat_id.3``...: re-running
    the queue after a crash returns the finished chats' results and continues the unfinished one.
    """
    with _queue_scope(store, chat_id):
        finished: list[ChatResult] = []
        for index, entry in enumerate(chat_queue):
            kind, arguments = _prepared(entry, index, finished)
            finished.append(
                _run_swarm(arguments)
                if kind == "swarm"
                else arguments.pop("sender").initiate_chat(**arguments)
            )
        return finished


async def a_initiate_chats(
    chat_queue: list[dict[str, Any]], *, store: Any = None, chat_id: str | None = None
) -> list[ChatResult]:
    """Async twin of :func:`initiate_chats`."""
    with _queue_scope(store, chat_id):
        finished: list[ChatResult] = []
        for index, entry in enumerate(chat_queue):
            kind, arguments = _prepared(entry, index, finished)
            if kind == "swarm":
                finished.append(await _a_run_swarm(arguments))
            else:
                finished.append(await arguments.pop("sender").a_initiate_chat(**arguments))
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

    with scoped(ChatScope(open_store(store), chat_id or new_chat_id())):
        yield


def check_queue_entry(entry: Any, index: int) -> dict[str, Any]:
    """``chat_queue[index]``, which must be a dict (a chat's arguments)."""
    if not isinstance(entry, dict):
        raise TypeError(f"chat_queue[{index}] must be a dict, not {entry!r:.80}")
    return entry


def _prepared(entry: dict[str, Any], index: int, finished: list[ChatResult]) -> tuple[str, dict[str, Any]]:
    arguments = dict(check_queue_entry(entry, index))
    carryover = arguments.pop("carryover", [])
    carryover = [carryover] if isinstance(carryover, str) else list(carryover)
    excluded = set(arguments.pop("finished_chat_indexes_to_exclude_from_carryover", []))
    carryover += [result.summary for i, result in enumerate(finished) if i not in excluded and result.summary]
    arguments.pop("carryover_config", None)
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


def _run_swarm(arguments: dict[str, Any]) -> ChatResult:
    from parley.swarm import initiate_swarm_chat

    result, _, _ = initiate_swarm_chat(**_swarm_call(arguments))
    return result


async def _a_run_swarm(arguments: dict[str, Any]) -> ChatResult:
    from parley.swarm import a_initiate_swarm_chat

    result, _, _ = await a_initiate_swarm_chat(**_swarm_call(arguments))
    return result


# ----------------------------------------------------------------------------------------------------
# nested chats as a reply


def register_nested_chats(
    agent: ConversableAgent,
    chat_queue: list[dict[str, Any]],
    trigger: Any,
    position: int = 1,
    use_async: bool | None = None,
) -> None:
    """Make ``agent`` reply, to senders matching ``trigger``, with the summary of ``chat_queue``.

    The chats run in order (see :func:`initiate_chats`); a chat without ``message`` starts from the
    last message received, and a ``carryover_config`` on the first chat adds the parent chat as context
    (:func:`process_nested_chat_carryover`, with its ``trim_n_messages``). By default the nested chats
    answer right after the termination and human check.
    """
    if not isinstance(chat_queue, list) or not chat_queue:
        raise ValueError("chat_queue must be a non-empty list of chats")
    for index, entry in enumerate(chat_queue):
        if "recipient" not in check_queue_entry(entry, index) and "swarm" not in entry:
            raise ValueError(f"chat_queue[{index}] needs a 'recipient'")

    def summary_from_nested_chats(
        recipient: ConversableAgent,
        messages: list[Message] | None = None,
        sender: Agent | None = None,
        config: Any = None,
    ) -> tuple[bool, str | None]:
        queue = _queue_for(chat_queue, recipient, messages or [], sender)
        if not queue:
            return True, None
        return True, initiate_chats(queue)[-1].summary

    async def a_summary_from_nested_chats(
        recipient: ConversableAgent,
        messages: list[Message] | None = None,
        sender: Agent | None = None,
        config: Any = None,
    ) -> tuple[bool, str | None]:
        queue = _queue_for(chat_queue, recipient, messages or [], sender)
        if not queue:
            return True, None
        return True, (await a_initiate_chats(queue))[-1].summary

    agent.register_reply(
        trigger,
        a_summary_from_nested_chats if use_async else summary_from_nested_chats,
        position=position,
        async_twin=None if use_async else a_summary_from_nested_chats,
        ignore_async_in_sync_chat=bool(use_async),
    )


def _queue_for(
    chat_queue: list[dict[str, Any]],
    recipient: ConversableAgent,
    messages: list[Message],
    sender: Agent | None,
) -> list[dict[str, Any]]:
    queue: list[dict[str, Any]] = []
    for index, entry in enumerate(chat_queue):
        chat = dict(entry)
        chat.setdefault("sender", recipient)
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
        if callable(message):
            message = message(recipient, messages, sender, None)
        if message:
            chat["message"] = message
            queue.append(chat)
    return queue
