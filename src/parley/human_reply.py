"""How an agent ends a chat or asks its human: ``human_input_mode``, ``is_termination_msg`` and
``max_consecutive_auto_reply``, the first reply function of every agent."""

from __future__ import annotations

import inspect
from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from parley.engine import run_sync
from parley.events import Notice
from parley.messages import Message
from parley.termination import StopKind, StopReason

if TYPE_CHECKING:
    from parley.agent import Agent
    from parley.engine import Chat


class HumanReplyMixin:
    """The termination and human-input check of :class:`~parley.agent.ConversableAgent`."""

    name: str
    human_input_mode: str
    _chat: Chat | None
    _stop_reason: StopReason | None
    _human_input: list[str]
    _is_termination_msg: Callable[[Message], bool]
    _consecutive_auto_reply_counter: defaultdict[Agent | None, int]
    _max_consecutive_auto_reply_dict: defaultdict[Agent | None, int]

    _view_messages: Callable[[Agent | None], list[Message]]

    def check_termination_and_human_reply(
        self, messages: list[Message] | None = None, sender: Agent | None = None, config: Any = None
    ) -> tuple[bool, str | dict[str, Any] | None]:
        """Ask the human or end the chat, as ``human_input_mode``, ``is_termination_msg`` and
        ``max_consecutive_auto_reply`` say. ``(False, None)`` lets the chain go on to an auto-reply."""
        return run_sync(self._termination_and_human_reply(messages, sender, sync=True))

    async def a_check_termination_and_human_reply(
        self, messages: list[Message] | None = None, sender: Agent | None = None, config: Any = None
    ) -> tuple[bool, str | dict[str, Any] | None]:
        """Async twin of :meth:`check_termination_and_human_reply`."""
        return await self._termination_and_human_reply(messages, sender, sync=False)

    async def _termination_and_human_reply(
        self, messages: list[Message] | None, sender: Agent | None, *, sync: bool
    ) -> tuple[bool, str | dict[str, Any] | None]:
        if messages is None:
            messages = self._view_messages(sender)
        if not messages:
            return False, None
        message = messages[-1]
        sender_name = "the sender" if sender is None else sender.name
        mode = self.human_input_mode
        reply = ""
        stop: StopReason | None = None
        asked = False
        if mode == "ALWAYS":
            reply = await self._ask_human(
                f"Replying as {self.name}. Provide feedback to {sender_name}. Press enter to skip and use "
                "auto-reply, or type 'exit' to end the conversation: ",
                sync,
            )
            asked = True
            if not reply and self._is_termination_msg(message):
                stop, reply = (
                    self._termination_stop(
                        message.get("name") or sender_name, "and no human input was given"
                    ),
                    "exit",
                )
        elif self._consecutive_auto_reply_counter[sender] >= self._max_consecutive_auto_reply_dict[sender]:
            limit = self._max_consecutive_auto_reply_dict[sender]
            if mode == "NEVER":
                stop = StopReason(
                    StopKind.MAX_CONSECUTIVE_AUTO_REPLY,
                    f"{self.name} reached max_consecutive_auto_reply ({limit})",
                    self.name,
                )
                reply = "exit"
            else:
                terminate = self._is_termination_msg(message)
                reply = await self._ask_human(
                    self._feedback_prompt(sender_name, auto_reply=not terminate), sync
                )
                asked = True
                if not reply and terminate:
                    stop, reply = (
                        self._termination_stop(
                            message.get("name") or sender_name, "and no human input was given"
                        ),
                        "exit",
                    )
        elif self._is_termination_msg(message):
            if mode == "NEVER":
                stop, reply = self._termination_stop(message.get("name") or sender_name, ""), "exit"
            else:
                reply = await self._ask_human(self._feedback_prompt(sender_name, auto_reply=False), sync)
                asked = True
                if not reply:
                    stop, reply = (
                        self._termination_stop(
                            message.get("name") or sender_name, "and no human input was given"
                        ),
                        "exit",
                    )
        if asked and not reply:
            self._notice("NO HUMAN INPUT RECEIVED.")
        if reply == "exit":
            self._consecutive_auto_reply_counter[sender] = 0
            self._stop_reason = stop or StopReason(
                StopKind.HUMAN_EXIT, f"The human replying as {self.name} typed 'exit'", self.name
            )
            return True, None
        if reply or self._max_consecutive_auto_reply_dict[sender] == 0:
            self._consecutive_auto_reply_counter[sender] = 0
            return True, _human_reply(reply, message)
        self._consecutive_auto_reply_counter[sender] += 1
        if mode != "NEVER":
            self._notice("USING AUTO REPLY...")
        return False, None

    @staticmethod
    def _feedback_prompt(sender_name: str, *, auto_reply: bool) -> str:
        skip = (
            "Press enter to skip and use auto-reply, or type 'exit'"
            if auto_reply
            else "Press enter or type 'exit'"
        )
        return f"Please give feedback to {sender_name}. {skip} to stop the conversation: "

    def _termination_stop(self, sender_name: str, suffix: str) -> StopReason:
        detail = f"{self.name} received a termination message from {sender_name}"
        return StopReason(StopKind.TERMINATION_MSG, f"{detail} {suffix}".strip(), self.name)

    def _notice(self, text: str) -> None:
        if self._chat is not None and self._chat.listeners:
            self._chat.emit(Notice(text))

    async def _ask_human(self, prompt: str, sync: bool) -> str:
        reply = self.get_human_input(prompt) if sync else await self.a_get_human_input(prompt)
        if not isinstance(reply, str):
            raise TypeError(f"get_human_input of {self.name} must return a string, returned {reply!r}")
        self._human_input.append(reply)
        if self._chat is not None:
            self._chat.human_input.append(reply)
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
