"""Events: every chat's events reach subscribers, with nothing printed when silent."""

from __future__ import annotations

import pytest

from parley import ConversableAgent, StopKind
from parley.events import ChatStarted, ChatStopped, Event, MessageSent, listening, subscribe


def pair() -> tuple[ConversableAgent, ConversableAgent]:
    return tuple(  # type: ignore[return-value]
        ConversableAgent(name, llm_config=False, human_input_mode="NEVER", default_auto_reply=f"{name}!")
        for name in ("a", "b")
    )


def test_subscribers_get_every_message_and_the_stop(capsys):
    seen: list[Event] = []
    a, b = pair()

    with listening(seen.append):
        a.initiate_chat(b, "hi", max_turns=1, silent=True)
    a.initiate_chat(b, "again", max_turns=1, silent=True)

    assert [(e.sender, e.recipient, e.message["content"]) for e in seen if isinstance(e, MessageSent)] == [
        ("a", "b", "hi"),
        ("b", "a", "b!"),
    ]
    assert isinstance(seen[-1], ChatStopped)
    assert capsys.readouterr().out == ""


def test_unsubscribe_stops_delivery():
    seen: list[Event] = []
    a, b = pair()
    unsubscribe = subscribe(seen.append)
    unsubscribe()

    a.initiate_chat(b, "hi", max_turns=1, silent=True)

    assert seen == []


def test_the_console_printer_is_still_importable_from_events():
    from parley import console, events

    assert events.ConsolePrinter is console.ConsolePrinter
    with pytest.raises(AttributeError, match="no attribute 'Printer'"):
        events.Printer  # noqa: B018


def test_listeners_that_cannot_take_events_are_named_before_the_chat_starts():
    import pytest

    from parley import ConversableAgent
    from parley.events import subscribe

    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    assistant = ConversableAgent(
        "assistant", llm_config=False, human_input_mode="NEVER", default_auto_reply="ok"
    )

    with pytest.raises(TypeError, match="a listener must be a callable that takes an event, not 5"):
        user.initiate_chat(assistant, "hi", max_turns=1, silent=True, listeners=[5])
    with pytest.raises(
        TypeError,
        match="listeners must be a list of callables that take an event, not <built-in function print>",
    ):
        user.initiate_chat(assistant, "hi", max_turns=1, silent=True, listeners=print)
    with pytest.raises(TypeError, match="a listener must be a callable that takes an event, not 'x'"):
        subscribe("x")  # type: ignore[arg-type]
    assert user.chat_messages == {}, "nothing was said"
    seen: list[str] = []
    user.initiate_chat(
        assistant,
        "hi",
        max_turns=1,
        silent=True,
        listeners=(lambda event: seen.append(event.kind) for _ in "1"),
    )
    assert "message" in seen


def test_a_listener_failing_on_a_failed_chats_stop_leaves_the_chats_own_error_to_see(capsys):
    """The model's error is what the caller gets (with the listener's failure noted), and what the
    console held is printed."""

    class Broken:
        def create(self, messages, tools=None, **params):
            raise RuntimeError("the model is down")

        async def a_create(self, messages, tools=None, **params):
            raise RuntimeError("the model is down")

    def fails_on_stop(event: Event) -> None:
        if isinstance(event, ChatStopped):
            raise ValueError("the listener's own bug")

    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    assistant = ConversableAgent("assistant", llm_config=Broken(), human_input_mode="NEVER")

    with pytest.raises(RuntimeError, match="the model is down") as raised:
        user.initiate_chat(assistant, "hello there", max_turns=2, listeners=[fails_on_stop])

    assert raised.value.__notes__[-1] == (
        "A listener also failed on the chat's stop: ValueError: the listener's own bug"
    )
    assert raised.value.chat_result.stop_reason.agent == "assistant"
    assert "hello there" in capsys.readouterr().out


def test_a_listener_failing_on_the_stop_of_a_chat_that_ended_well_is_raised_after_the_console_printed(capsys):
    def fails_on_stop(event: Event) -> None:
        if isinstance(event, ChatStopped):
            raise ValueError("the listener's own bug")

    a, b = pair()

    with pytest.raises(ValueError, match="the listener's own bug") as raised:
        a.initiate_chat(b, "hi", max_turns=1, listeners=[fails_on_stop])

    assert [m["content"] for m in raised.value.chat_result.chat_history] == ["hi", "b!"]
    assert raised.value.chat_result.stop_reason.kind is StopKind.MAX_TURNS
    assert "b!" in capsys.readouterr().out


class Keeping:
    """A listener that takes only the kinds it names."""

    def __init__(self, *kinds: type) -> None:
        self.wants = frozenset(kinds)
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)


@pytest.mark.parametrize(
    "kinds",
    [(ChatStopped,), (ChatStarted,), (ChatStarted, ChatStopped)],
    ids=["stopped", "started", "both"],
)
def test_a_listener_of_only_the_start_or_the_stop_of_chats_gets_them(kinds: tuple[type, ...]):
    listener = Keeping(*kinds)
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER", default_auto_reply="hi")
    other = ConversableAgent("other", llm_config=False, human_input_mode="NEVER", default_auto_reply="yo")

    user.initiate_chat(other, "hello", max_turns=2, silent=True, listeners=[listener])

    assert [type(event) for event in listener.events] == list(kinds)
    if ChatStopped in kinds:
        assert listener.events[-1].reason.kind is StopKind.MAX_TURNS


def test_a_reflection_summary_is_a_model_call_of_the_chat_its_events_and_its_stop_count():
    from parley import ScriptedModel
    from parley.events import ModelRequested, ModelResponded
    from parley.models import Usage

    events: list[Event] = []
    model = ScriptedModel(["the answer", "the summary"], usage=Usage(100, 10))
    assistant = ConversableAgent("assistant", llm_config=model, human_input_mode="NEVER")
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")

    result = user.initiate_chat(
        assistant,
        "question",
        max_turns=1,
        summary_method="reflection_with_llm",
        silent=True,
        listeners=[events.append],
    )

    assert result.summary == "the summary"
    kinds = [type(event) for event in events]
    assert kinds[-3:] == [ModelRequested, ModelResponded, ChatStopped], "the summary's call, then the stop"
    assert kinds.count(ModelRequested) == 2
    stopped = events[-1]
    assert isinstance(stopped, ChatStopped)
    assert stopped.usage["calls"] == 2 and stopped.usage["prompt_tokens"] == 200
