"""Agents that implement only AG2's ``Agent`` protocol (``name``, ``description``, ``send``/``receive``,
``generate_reply``) as peers of a chat.

Such an agent is not a :class:`~parley.agent.ConversableAgent`: the engine cannot ask its reply chain.
In a chat it takes part through a :class:`ProtocolPeer`, a participant whose only reply is the agent's
own ``generate_reply(messages, sender)`` (``a_generate_reply`` in async chats, when it has one); a
``None`` reply ends the chat. The initiator's ``chat_messages`` are keyed by the agent itself.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from parley.agent import ConversableAgent
from parley.agent_base import Agent, check_protocol_agent
from parley.engine import Alternating, Chat
from parley.events import Listener
from parley.messages import Message
from parley.reply_chain import ReplyChain, reply_entry
from parley.termination import max_turns_condition


def as_participant(agent: Any) -> ConversableAgent:
    """``agent`` itself if the engine can run it, else a :class:`ProtocolPeer` standing for it."""
    if isinstance(agent, ConversableAgent):
        return agent
    check_protocol_agent(agent, "recipient")
    return ProtocolPeer(agent)


class ProtocolPeer(ConversableAgent):
    """A chat participant standing for ``agent``, an object with AG2's ``Agent`` protocol."""

    def __init__(self, agent: Any) -> None:
        super().__init__(
            agent.name,
            llm_config=False,
            human_input_mode="NEVER",
            description=str(getattr(agent, "description", "") or ""),
        )
        self.agent = agent
        self._reply_func_list = ReplyChain(
            [reply_entry([Agent, None], _protocol_reply, None, None, False, async_twin=_a_protocol_reply)]
        )

    def _chat_started_by(
        self,
        initiator: ConversableAgent,
        *,
        max_turns: int | None,
        clear_history: bool,
        silent: bool,
        chat_id: str | None = None,
        listeners: Sequence[Listener] = (),
        stop_when: Any = None,
    ) -> Chat:
        initiator.reply_at_receive[self.agent] = max_turns is None
        conditions = [] if max_turns is None else [max_turns_condition(max_turns)]
        views = None if clear_history else {initiator: initiator._view(self.agent)}
        return Chat(
            {initiator: self.agent, self: initiator},
            Alternating(initiator, self),
            conditions=conditions,
            context_variables=dict(initiator._context_variables),
            silent=silent,
            listeners=listeners,
            chat_id=chat_id,
            views=views,
            stop_when=stop_when,
        )


def _protocol_reply(
    recipient: ProtocolPeer, messages: list[Message] | None = None, sender: Any = None, config: Any = None
) -> tuple[bool, Any]:
    reply = recipient.agent.generate_reply(messages=messages, sender=sender)
    if inspect.isawaitable(reply):
        raise TypeError(
            f"{recipient.name}'s generate_reply returned an awaitable: run the chat with a_initiate_chat"
        )
    return True, reply


async def _a_protocol_reply(
    recipient: ProtocolPeer, messages: list[Message] | None = None, sender: Any = None, config: Any = None
) -> tuple[bool, Any]:
    generate = getattr(recipient.agent, "a_generate_reply", None)
    reply = (generate or recipient.agent.generate_reply)(messages=messages, sender=sender)
    if inspect.isawaitable(reply):
        reply = await reply
    return True, reply
