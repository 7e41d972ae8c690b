"""How an agent ends a chat or asks its human: ``human_input_mode``, ``is_termination_msg`` and
``max_consecutive_auto_reply``, the first reply function of every agent."""

from __future__ import annotations

import inspect
from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from parley.console import release
from parley.engine import current_chat, run_sync
from parley.events import HumanInputGiven, HumanInputRequested, Notice
from parley.messages import Message
from parley.termination import StopKind, StopReason

if TYPE_CHECKING:
    from parley.agent import Agent
    from parley.engine import Chat


class HumanReplyMixin:
    """The termination and human-input check of :class:`~parley.agent.ConversableAgent`."""

    name: str
    _name: str
    _loose_auto_replies: defaultdict[Agent | None, int]
    human_input_mode: str
    _is_termination_msg: Callable[[Message], bool]
    _max_consecutive_auto_reply_dict: defaultdict[Agent | None, int]

    _view_messages: Callable[[Agent | None], list[Message]]
    max_consecutive_auto_reply: Callable[[Agent | None], int]
    _auto_replies: Callable[[Agent | None], tuple[dict[Any, int], Any]]

    def check_termination_and_human_reply(
        self, messages: list[Message] | None = None, sender: Agent | None = None, config: Any = None
    ) -> tuple[bool, str | dict[str, Any] | None]:
        """Ask the human or end the chat, as ``human_input_mode``, ``is_termination_msg`` and
        ``max_consecutive_auto_reply`` say. ``(False, None)`` lets the chain go on to an auto-reply."""
        if self.human_input_mode == "NEVER":
            return self._check_without_human(messages, sender)
        return run_sync(self._check_with_human(messages, sender, sync=True))

    async def a_check_termination_and_human_reply(
        self, messages: list[Message] | None = None, sender: Agent | None = None, config: Any = None
    ) -> tuple[bool, str | dict[str, Any] | None]:
        """Async twin of :meth:`check_termination_and_human_reply`."""
        outcome = self._check_in_async_chain(messages, sender)
        return outcome if type(outcome) is tuple else await outcome

    def _check_in_async_chain(
        self, messages: list[Message] | None = None, sender: Agent | None = None, config: Any = None
    ) -> Any:
        """:meth:`a_check_termination_and_human_reply` as the async reply chain calls it: the outcome at
        once when no human is asked (``NEVER``), else a coroutine to await."""
        if self.human_input_mode == "NEVER":
            return self._check_without_human(messages, sender)
        return self._check_with_human(messages, sender, sync=False)

    def _check_without_human(
        self, messages: list[Message] | None, sender: Agent | None
    ) -> tuple[bool, str | dict[str, Any] | None]:
        """``NEVER`` mode: end at the auto-reply limit or on a termination message, else auto-reply."""
        message = self._last_received(messages, sender)
        if message is None:
            return False, None
        limit = self.max_consecutive_auto_reply(sender)
        chat = current_chat.get()
        if chat is not None:
            counters: dict[Any, int] = chat.state.auto_replies
            key: Any = self._name
        else:
            counters, key = self._loose_auto_replies, sender
        count = counters.get(key, 0)
        if count >= limit:
            return self._end(counters, key, self._limit_stop(limit))
        if self._is_termination_msg(message):
            return self._end(counters, key, self._termination_stop(message, sender, asked=False))
        counters[key] = count + 1
        return False, None

    async def _check_with_human(
        self, messages: list[Message] | None, sender: Agent | None, *, sync: bool
    ) -> tuple[bool, str | dict[str, Any] | None]:
        """``ALWAYS`` and ``TERMINATE`` modes: ask the human when the mode says so.

        An empty answer means auto-reply, except on a termination message, which then ends the chat;
        ``exit`` ends it; any other answer is sent as the agent's reply.
        """
        message = self._last_received(messages, sender)
        if message is None:
            return False, None
        sender_name = "the sender" if sender is None else sender.name
        limit = self.max_consecutive_auto_reply(sender)
        counters, key = self._auto_replies(sender)
        terminate = self._is_termination_msg(message)
        if self.human_input_mode == "ALWAYS":
            prompt: str | None = (
                f"Replying as {self.name}. Provide feedback to {sender_name}. Press enter to skip and use "
                "auto-reply, or type 'exit' to end the conversation: "
            )
        elif counters.get(key, 0) >= limit:
            prompt = self._feedback_prompt(sender_name, auto_reply=not terminate)
        elif terminate:
            prompt = self._feedback_prompt(sender_name, auto_reply=False)
        else:
            prompt = None
        reply = "" if prompt is None else await self._ask_human(prompt, sync)
        if prompt is not None and not reply:
            self._notice("NO HUMAN INPUT RECEIVED.")
        if reply == "exit":
            return self._end(counters, key, self._human_exit())
        if not reply and prompt is not None and terminate:
            return self._end(counters, key, self._termination_stop(message, sender, asked=True))
        if reply or limit == 0:
            counters[key] = 0
            return True, _human_reply(reply, message)
        counters[key] = counters.get(key, 0) + 1
        self._notice("USING AUTO REPLY...")
        return False, None

    def _last_received(self, messages: list[Message] | None, sender: Agent | None) -> Message | None:
        if messages is None:
            messages = self._view_messages(sender)
        return messages[-1] if messages else None

    def _end(self, counters: dict[Any, int], key: Any, stop: StopReason) -> tuple[bool, None]:
        counters[key] = 0
        chat = current_chat.get()
        if chat is not None:
            chat.note_reply_stop(self, stop)
        return True, None

    def _human_exit(self) -> StopReason:
        """Why a chat ends when this agent's human answers ``exit``."""
        return StopReason(StopKind.HUMAN_EXIT, f"The human replying as {self.name} typed 'exit'", self.name)

    def _limit_stop(self, limit: int) -> StopReason:
        detail = f"{self.name} reached max_consecutive_auto_reply ({limit})"
        return StopReason(StopKind.MAX_CONSECUTIVE_AUTO_REPLY, detail, self.name)

    @staticmethod
    def _feedback_prompt(sender_name: str, *, auto_reply: bool) -> str:
        skip = (
            "Press enter to skip and use auto-reply, or type 'exit'"
            if auto_reply
            else "Press enter or type 'exit'"
        )
        return f"Please give feedback to {sender_name}. {skip} to stop the conversation: "

    def _termination_stop(self, message: Message, sender: Agent | None, *, asked: bool) -> StopReason:
        source = message.get("name") or ("the sender" if sender is None else sender.name)
        detail = f"{self.name} received a termination message from {source}"
        if asked:
            detail += " and no human input was given"
        return StopReason(StopKind.TERMINATION_MSG, detail, self.name)

    def _notice(self, text: str) -> None:
        chat = current_chat.get()
        if chat is not None and chat.listeners and chat.wants(Notice):
            chat.emit(Notice(text))

    async def _ask_human(self, prompt: str, sync: bool, chat: Chat | None = None) -> str:
        """Ask the human (a recorded answer of a resumed chat is used instead), and record the answer."""
        if chat is None:
            chat = current_chat.get()
        if chat is not None:
            recorded = chat.recorded_answer(self)
            if recorded is not None:
                return recorded
        if chat is not None and chat.listeners and chat.wants(HumanInputRequested):
            chat.emit(HumanInputRequested(self.name, prompt))
        if chat is not None and chat.holding:
            release()
        reply = self.get_human_input(prompt) if sync else await self.a_get_human_input(prompt)
        if not isinstance(reply, str):
            raise TypeError(f"get_human_input of {self.name} must return a string, returned {reply!r}")
        if chat is not None:
            chat.record_human_input(self, reply)
            if chat.listeners and chat.wants(HumanInputGiven):
                chat.emit(HumanInputGiven(self.name, reply))
        return reply

    def get_human_input(self, prompt: str, **kwargs: Any) -> str:
        """Ask the human at the console. Replace it on an instance to answer from elsewhere."""
        return input(prompt)

    async def a_get_human_input(self, prompt: str, **kwargs: Any) -> str:
        """Async twin of :meth:`get_human_input`.

        Calls a replaced ``get_human_input`` (awaiting it if it is async), else reads the console in a thread.
        """
        if self._asks_console():
            import asyncio

            return await asyncio.to_thread(input, prompt)
        reply = self.get_human_input(prompt, **kwargs)
        return await reply if inspect.isawaitable(reply) else reply

    def _asks_console(self) -> bool:
        return (
            "get_human_input" not in self.__dict__
            and type(self).get_human_input is HumanReplyMixin.get_human_input
        )


def _human_reply(reply: str, message: Message) -> dict[str, Any]:
    response: dict[str, Any] = {"role": "user", "content": reply}
    interrupted = [
        {"role": "tool", "tool_call_id": call.get("id", ""), "content": "USER INTERRUPTED"}
        for call in message.get("tool_calls") or ()
    ]
    if interrupted:
        response["tool_responses"] = interrupted
    return response
