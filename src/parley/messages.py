"""Messages in OpenAI chat format, and each participant's view of a conversation.

A message is a plain ``dict`` with the keys ``role``, ``content``, ``name``, ``tool_calls``,
``tool_call_id`` and, for a reply that carries several tool results, ``tool_responses`` (as AG2 keeps
them). Messages are never mutated after they are appended to a conversation, so views share them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, overload

Message = dict[str, Any]

#: Keys a conversation keeps from a message; anything else a caller passes is dropped.
MESSAGE_KEYS = ("content", "tool_calls", "tool_responses", "tool_call_id", "name", "function_call", "context")
_KEPT = frozenset(MESSAGE_KEYS)


def content_str(content: Any) -> str:
    """Return the text of a message's ``content``: a string, ``None`` or a list of content parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


class Reply(dict[str, Any]):
    """A message parley built itself (a model's tool calls, a tool reply): valid by construction, so the
    conversation logs it as it is, only adding the speaker's name."""

    __slots__ = ()


def to_message(message: Any, *, parameter: str = "message") -> Message:
    """Turn a string, a list of content parts or a message dict into a new message dict, or fail
    naming ``parameter``.

    A message's ``content`` is text, a list of content parts in OpenAI's format (``{"type": "text",
    "text": ...}`` and ``{"type": "image_url", "image_url": {"url": ...}}``), or ``None`` beside
    ``tool_calls``.

    Raises:
        TypeError: ``message``, its content, or another of its keys has the wrong type.
        ValueError: the dict has neither ``content`` nor ``tool_calls``, or a content part or tool call
            is malformed.
    """
    if isinstance(message, str):
        return {"content": message}
    if not isinstance(message, dict):
        if isinstance(message, list):
            return {"content": checked_content_parts(message, parameter)}
        raise TypeError(
            f"{parameter} must be a string or a message dict (or a list of content parts), not "
            f"{type(message).__name__}: {message!r:.80}"
        )
    kept = {key: value for key, value in message.items() if value is not None and key in _KEPT}
    content = kept.get("content")
    if content is None:
        if not (kept.get("tool_calls") or kept.get("function_call")):
            raise ValueError(
                f"{parameter} needs 'content' or 'tool_calls'; got keys {sorted(message, key=str)}"
            )
        kept["content"] = None
    elif type(content) is not str:
        if not isinstance(content, list):
            raise TypeError(
                f"{parameter}['content'] must be a string, a list of content parts or None, not "
                f"{type(content).__name__}: {content!r:.80}"
            )
        checked_content_parts(content, f"{parameter}['content']")
    name = kept.get("name")
    if name is not None and type(name) is not str:
        raise TypeError(f"{parameter}['name'] must be a string, not {type(name).__name__}: {name!r:.80}")
    if "tool_calls" in kept or "tool_responses" in kept:
        check_tool_keys(kept, parameter)
    role = message.get("role")
    if role in ("tool", "function"):
        kept["role"] = role
    elif "override_role" in message:
        role = message["override_role"]
        if not isinstance(role, str):
            raise TypeError(
                f"{parameter}['override_role'] must be a string, not {type(role).__name__}: {role!r:.80}"
            )
        kept["role"] = role
    return kept


#: The kinds of content part a message may hold.
CONTENT_PART_TYPES = ("text", "image_url")


def checked_content_parts(parts: list[Any], parameter: str = "content") -> list[Any]:
    """``parts`` if it is a list of OpenAI content parts (text and images), else an error naming the part."""
    for index, part in enumerate(parts):
        where = f"{parameter}[{index}]"
        if not isinstance(part, dict):
            raise TypeError(f"{where} must be a content part dict, not {type(part).__name__}: {part!r:.80}")
        kind = part.get("type")
        if kind == "text":
            if not isinstance(part.get("text"), str):
                raise ValueError(f"{where} is a text part, so its 'text' must be a string: {part!r:.80}")
        elif kind == "image_url":
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, dict) else image
            if not isinstance(url, str):
                raise ValueError(
                    f"{where} is an image part, so it needs 'image_url': {{'url': <a URL or data URL>}}: "
                    f"{part!r:.80}"
                )
        else:
            raise ValueError(
                f"{where} has type {kind!r}; content parts are of the types {list(CONTENT_PART_TYPES)}"
            )
    return parts


def check_tool_keys(kept: Message, parameter: str) -> None:
    """A message's ``tool_calls`` is a list of well-formed calls, its ``tool_responses`` a list of dicts.

    Raises:
        TypeError, ValueError: naming ``parameter`` and what is wrong.
    """
    calls = kept.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list):
            raise TypeError(
                f"{parameter}['tool_calls'] must be a list, not {type(calls).__name__}: {calls!r:.80}"
            )
        for index, call in enumerate(calls):
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                raise ValueError(
                    f"{parameter}['tool_calls'][{index}] must be {{'id': ..., 'type': 'function', "
                    f"'function': {{'name': <str>, 'arguments': <JSON text>}}}}, not {call!r:.80}"
                )
    responses = kept.get("tool_responses")
    if responses is not None and not (
        isinstance(responses, list) and all(isinstance(response, dict) for response in responses)
    ):
        raise TypeError(f"{parameter}['tool_responses'] must be a list of message dicts: {responses!r:.80}")


def to_logged(message: Any, speaker_name: str, *, parameter: str | None = None) -> Message:
    """A new message as the conversation log keeps it, from a string or a message dict, validated.

    It is named after its speaker and has a role: plain messages get ``user`` (the role every other
    participant reads them with), a message with tool calls is ``assistant`` (only the assistant may call
    tools), tool results stay ``tool``. An invalid message is an error naming ``parameter`` (default:
    the reply of the speaker).
    """
    if type(message) is str:
        return {"content": message, "role": "user", "name": speaker_name}
    if type(message) is Reply:
        if "name" not in message:
            message["name"] = speaker_name
        return message
    try:
        logged = to_message(message)
    except (TypeError, ValueError):
        to_message(message, parameter=parameter or f"the reply of {speaker_name}")
        raise
    if logged.get("tool_calls") or logged.get("function_call"):
        logged["role"] = "assistant"
    elif "role" not in logged:
        logged["role"] = "user"
    if "name" not in logged:
        logged["name"] = speaker_name
    return logged


def as_own(logged: Message) -> Message:
    """The speaker's own view of a logged message: plain messages become ``assistant``."""
    if logged["role"] != "user":
        return logged
    own = dict(logged)
    own["role"] = "assistant"
    return own


def for_model(message: Message) -> Iterator[Message]:
    """The OpenAI-format messages a logged message stands for in a model request.

    A message with ``tool_responses`` expands into its tool messages (followed by the message itself
    unless it is a tool message, whose content just repeats them).
    """
    responses = message.get("tool_responses")
    if not responses:
        yield message
        return
    yield from responses
    if message.get("role") != "tool":
        yield {key: value for key, value in message.items() if key != "tool_responses"}


def model_form(message: Message) -> list[Message] | None:
    """The OpenAI-format messages a message with ``tool_responses`` stands for; ``None`` for the others,
    which stand for themselves."""
    responses = message.get("tool_responses")
    if not responses:
        return None
    if message.get("role") == "tool":
        return responses
    return list(for_model(message))


class MessageSequence(Sequence[Message]):
    """A read-only sequence of a request's system messages followed by a conversation view.

    Built in O(1) however long the conversation is; valid while the model call runs. Copy it with
    ``list()`` to keep it.
    """

    __slots__ = ("_tail", "head")

    def __init__(self, head: Sequence[Message], tail: Sequence[Message]) -> None:
        self.head = head
        """The messages before the conversation (the system message)."""
        self._tail = tail

    def __len__(self) -> int:
        return len(self.head) + len(self._tail)

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...
    def __getitem__(self, index: int | slice) -> Message | list[Message]:
        if isinstance(index, slice):
            return list(self)[index]
        return joined_item(self.head, self._tail, len(self), index)

    def __iter__(self) -> Iterator[Message]:
        yield from self.head
        yield from self._tail

    def __repr__(self) -> str:
        return f"MessageSequence({list(self)!r})"


def joined_item(head: Sequence[Message], tail: Sequence[Message], size: int, index: int) -> Message:
    """Item ``index`` (negative: from the end) of ``head`` followed by ``tail``, ``size`` items in all."""
    if index < 0:
        index += size
    if not 0 <= index < size:
        raise IndexError("message index out of range")
    return head[index] if index < len(head) else tail[index - len(head)]


class View:
    """One participant's view of one conversation, kept up to date message by message.

    ``messages`` is what AG2 calls ``chat_messages[peer]``: the participant's own messages with the role
    ``assistant``, everyone else's as ``user`` with the speaker's ``name``. ``model_messages`` is the same
    conversation flattened into pure OpenAI format for a model request; it is kept up to date only once
    asked for (an agent without a model never pays for it).
    """

    __slots__ = ("_added", "_model_messages", "messages")

    def __init__(self, *, for_model: bool = True) -> None:
        self.messages: list[Message] = []
        self._model_messages: list[Message] | None = [] if for_model else None
        self._added = 0

    def add(self, message: Message) -> None:
        """Append one message (already in this participant's perspective)."""
        self.add_flattened(message, model_form(message))

    def add_flattened(self, message: Message, flat: list[Message] | None) -> None:
        """Append one message whose model form is ``flat`` (``None``: the message itself)."""
        self.messages.append(message)
        self._added += 1
        model_messages = self._model_messages
        if model_messages is not None:
            if flat is None:
                model_messages.append(message)
            else:
                model_messages.extend(flat)

    def extend_plain(self, messages: list[Message]) -> None:
        """Append messages (already in this participant's perspective) that stand for themselves in a
        model request (without ``tool_responses``)."""
        self.messages.extend(messages)
        self._added += len(messages)
        if self._model_messages is not None:
            self._model_messages.extend(messages)

    @property
    def model_messages(self) -> list[Message]:
        """The view flattened for a model request; rebuilt if ``messages`` was edited by hand."""
        if self._model_messages is None or self._added != len(self.messages):
            self._model_messages = flatten_for_model(self.messages)
            self._added = len(self.messages)
        return self._model_messages


def flatten_for_model(messages: Sequence[Message]) -> list[Message]:
    """All of ``messages`` as OpenAI-format messages for a model request."""
    return [flat for message in messages for flat in for_model(message)]
