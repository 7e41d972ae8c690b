"""Transit messages: the handoff tool calls of a swarm and their results, which the agents' models need
not see (``initiate_swarm_chat(exclude_transit_message=True)``, the default).

The messages stay in the log and in every agent's ``chat_messages``; only the form sent to a model leaves
them out. A message whose tool calls are all handoffs is left out (kept without its calls if it also has
text); a tool reply keeps only the results of calls that were not handoffs.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from parley.messages import Message, for_model


class Transit:
    """The transit calls of one chat: the handoff tool names, and the ids of the calls left out and not
    answered yet.

    Called with a message that has tool calls or tool results, it returns the messages a model sees for
    it when transit calls change them, else ``None`` (see :class:`~parley.engine.Chat`'s
    ``model_form``).
    """

    __slots__ = ("dropped", "names")

    def __init__(self, names: Collection[str]) -> None:
        self.names = frozenset(names)
        self.dropped: set[Any] = set()

    def __call__(self, message: Message) -> list[Message] | None:
        calls = message.get("tool_calls")
        if calls:
            names = self.names
            if len(calls) == 1:
                call = calls[0]
                if (call.get("function") or {}).get("name") not in names:
                    return None
                self.dropped.add(call.get("id"))
                content = message.get("content")
                if content is None or content == "" or content == "None":
                    return []
                return [{key: value for key, value in message.items() if key != "tool_calls"}]
            transit = [call for call in calls if (call.get("function") or {}).get("name") in names]
            if not transit:
                return None
            for call in transit:
                self.dropped.add(call.get("id"))
            if len(transit) == len(calls):
                content = message.get("content")
                if content is None or content == "" or content == "None":
                    return []
            rest = {key: value for key, value in message.items() if key != "tool_calls"}
            if len(transit) < len(calls):
                rest["tool_calls"] = [call for call in calls if call not in transit]
            return list(for_model(rest))
        dropped = self.dropped
        responses = message.get("tool_responses")
        if not dropped or not responses:
            return None
        if len(responses) == 1:
            call_id = responses[0].get("tool_call_id")
            if call_id not in dropped:
                return None
            dropped.discard(call_id)
            return []
        kept = [response for response in responses if response.get("tool_call_id") not in dropped]
        if len(kept) == len(responses):
            return None
        for response in responses:
            dropped.discard(response.get("tool_call_id"))
        return list(for_model({**message, "tool_responses": kept})) if kept else []
