"""The console: each event kind's exact text, a whole printed swarm, and colours only at a terminal."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

import pytest

from parley import (
    AFTER_WORK,
    ON_CONDITION,
    Agent,
    ConversableAgent,
    GroupChat,
    GroupChatManager,
    ScriptedModel,
    SwarmAgent,
    SwarmResult,
    initiate_swarm_chat,
    tool_call,
)
from parley.console import (
    ANSI,
    PLAIN,
    TERMINAL_COLOURS,
    Colours,
    ConsolePrinter,
    release,
    terminal_colours,
)
from parley.events import (
    ChatStopped,
    ContextUpdated,
    Handoff,
    MessageSent,
    Notice,
    SpeakerSelected,
    ToolExecuting,
)
from parley.termination import StopKind, StopReason

RULE = "-" * 80


def box(banner: str, body: str) -> str:
    """A banner, the text under it and a line of stars as long as the banner, as AG2 prints tools."""
    return f"{banner}\n{body}\n{'*' * len(banner)}\n"


def printed(*events: Any) -> str:
    out = io.StringIO()
    printer = ConsolePrinter(out)
    for event in events:
        printer(event)
    return out.getvalue()


# each event kind, exactly --------------------------------------------------------------------------------


def test_a_text_message():
    message = {"role": "user", "name": "user", "content": "What is 2 + 2?"}

    assert printed(MessageSent("user", "assistant", message)) == (
        f"user (to assistant):\n\nWhat is 2 + 2?\n\n{RULE}\n"
    )


def test_a_message_of_content_parts_prints_their_text():
    content = [{"type": "text", "text": "look at "}, {"type": "image_url", "image_url": {"url": "x"}}]
    message = {"role": "user", "name": "user", "content": content}

    assert (
        printed(MessageSent("user", "assistant", message)) == f"user (to assistant):\n\nlook at \n\n{RULE}\n"
    )


def test_a_tool_call_shows_its_arguments_as_sent():
    call = {"id": "call_7", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "x"}'}}
    message = {"role": "assistant", "name": "agent", "content": None, "tool_calls": [call]}

    assert printed(MessageSent("agent", "chat_manager", message)) == (
        "agent (to chat_manager):\n\n"
        "***** Suggested tool call (call_7): lookup *****\n"
        'Arguments: \n{"q": "x"}\n'
        "************************************************\n"
        f"\n{RULE}\n"
    )


def test_text_with_two_tool_calls():
    calls = [
        {"id": "c1", "type": "function", "function": {"name": "a", "arguments": "{}"}},
        {"id": "c2", "type": "function", "function": {"name": "b", "arguments": ""}},
    ]
    message = {"role": "assistant", "name": "agent", "content": "Both.", "tool_calls": calls}

    assert printed(MessageSent("agent", "user", message)) == (
        "agent (to user):\n\nBoth.\n"
        + box("***** Suggested tool call (c1): a *****", "Arguments: \n{}")
        + box("***** Suggested tool call (c2): b *****", "Arguments: \n(No arguments found)")
        + f"\n{RULE}\n"
    )


def test_tool_results_show_each_response():
    responses = [
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        {"role": "tool", "tool_call_id": "c2", "content": "rainy"},
    ]
    message = {"role": "tool", "name": "agent", "content": "sunny\n\nrainy", "tool_responses": responses}

    assert printed(MessageSent("agent", "chat_manager", message)) == (
        "agent (to chat_manager):\n\n"
        + box("***** Response from calling tool (c1) *****", "sunny")
        + box("***** Response from calling tool (c2) *****", "rainy")
        + f"\n{RULE}\n"
    )


def test_a_single_tool_message_without_tool_responses():
    message = {"role": "tool", "name": "user", "tool_call_id": "c9", "content": "5"}

    assert printed(MessageSent("user", "assistant", message)) == (
        "user (to assistant):\n\n" + box("***** Response from calling tool (c9) *****", "5") + f"\n{RULE}\n"
    )


def test_the_other_event_kinds():
    stop = StopReason(StopKind.MAX_ROUND, "Maximum rounds (3) reached", None)

    assert printed(SpeakerSelected("b")) == "\nNext speaker: b\n\n"
    assert printed(Handoff("triage", "billing", "handoff")) == "\n>>>>>>>> handoff: triage -> billing\n"
    assert printed(Handoff("billing", "user", "after-work")) == "\n>>>>>>>> after-work: billing -> user\n"
    assert printed(ToolExecuting("billing", "refund", '{"id": 1}', "call_3")) == (
        '\n>>>>>>>> EXECUTING FUNCTION refund...\nCall ID: call_3\nInput arguments: {"id": 1}\n'
    )
    assert printed(ContextUpdated("triage", {"issue": "refund", "n": 2})) == (
        "\n>>>>>>>> CONTEXT UPDATED by triage: {'issue': 'refund', 'n': 2}\n"
    )
    assert printed(Notice("USING AUTO REPLY...")) == "\n>>>>>>>> USING AUTO REPLY...\n"
    assert printed(ChatStopped(stop)) == "\n>>>>>>>> CHAT STOPPED: Maximum rounds (3) reached\n"


def test_events_of_a_kind_the_console_does_not_show_print_nothing():
    @dataclass
    class Unknown:
        text: str

    assert printed(Unknown("x")) == ""  # type: ignore[arg-type]


def test_what_precedes_a_wait_is_flushed_at_once():
    class Recording(io.StringIO):
        def __init__(self) -> None:
            super().__init__()
            self.flushed: list[str] = []

        def flush(self) -> None:
            self.flushed.append(self.getvalue().splitlines()[-1])

    call = {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    out = Recording()
    printer = ConsolePrinter(out)
    for event in (
        MessageSent("a", "b", {"role": "assistant", "name": "a", "content": None, "tool_calls": [call]}),
        ToolExecuting("a", "lookup", "{}", "c1"),  # the tool runs next
        ContextUpdated("a", {"k": 1}),
        MessageSent("a", "b", {"role": "tool", "name": "a", "content": "found", "tool_call_id": "c1"}),
        Handoff("a", "b", "handoff"),
        SpeakerSelected("b"),
        MessageSent("b", "a", {"role": "assistant", "name": "b", "content": "hi"}),
        Notice("n"),
        ChatStopped(StopReason(StopKind.MAX_ROUND, "done", None)),
    ):
        printer(event)

    # a message with tool calls and a context update are followed at once by the next event
    assert out.flushed == [
        "Input arguments: {}",
        RULE,
        ">>>>>>>> handoff: a -> b",
        "",
        RULE,
        ">>>>>>>> n",
        ">>>>>>>> CHAT STOPPED: done",
    ]


# a whole chat ----------------------------------------------------------------------------------------


def record(issue: str, context_variables: dict[str, Any]) -> SwarmResult:
    """Record the issue."""
    return SwarmResult(values="Recorded.", context_variables={"issue": issue})


def test_a_printed_swarm_reads_as_ag2s_console(capsys):
    triage = SwarmAgent(
        "triage",
        llm_config=ScriptedModel(
            [[tool_call("record", {"issue": "refund"}, id="c1")], [tool_call("transfer_to_billing", id="c2")]]
        ),
        functions=[record],
        human_input_mode="NEVER",
    )
    billing = SwarmAgent("billing", llm_config=ScriptedModel(["Refunded."]), human_input_mode="NEVER")
    triage.register_hand_off(ON_CONDITION(billing, "Billing questions."))

    initiate_swarm_chat(triage, "I want a refund", [triage, billing], max_rounds=5)

    assert capsys.readouterr().out == (
        f"_User (to chat_manager):\n\nI want a refund\n\n{RULE}\n"
        "triage (to chat_manager):\n\n"
        + box("***** Suggested tool call (c1): record *****", 'Arguments: \n{"issue": "refund"}')
        + f"\n{RULE}\n"
        "\n>>>>>>>> EXECUTING FUNCTION record...\n"
        'Call ID: c1\nInput arguments: {"issue": "refund"}\n'
        "\n>>>>>>>> CONTEXT UPDATED by triage: {'issue': 'refund'}\n"
        "triage (to chat_manager):\n\n"
        + box("***** Response from calling tool (c1) *****", "Recorded.")
        + f"\n{RULE}\n"
        "triage (to chat_manager):\n\n"
        + box("***** Suggested tool call (c2): transfer_to_billing *****", "Arguments: \n{}")
        + f"\n{RULE}\n"
        "\n>>>>>>>> EXECUTING FUNCTION transfer_to_billing...\n"
        "Call ID: c2\nInput arguments: {}\n"
        "triage (to chat_manager):\n\n"
        + box("***** Response from calling tool (c2) *****", "Transferred to billing.")
        + f"\n{RULE}\n"
        "\n>>>>>>>> handoff: triage -> billing\n"
        f"billing (to chat_manager):\n\nRefunded.\n\n{RULE}\n"
        "\n>>>>>>>> CHAT STOPPED: billing replied without handing off; the chat's after-work ends the chat\n"
    )


# colours ---------------------------------------------------------------------------------------------


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def fresh_terminal(monkeypatch):
    """A terminal with 256 colours, whose colours are worked out anew."""
    monkeypatch.setattr("parley.console._terminal_colours", [])
    monkeypatch.setenv("TERM", "xterm-256color")
    for name in ("NO_COLOR", "FORCE_COLOR", "COLORTERM", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        monkeypatch.delenv(name, raising=False)


def test_at_a_terminal_the_same_text_is_coloured(fresh_terminal):
    out = FakeTerminal()
    printer = ConsolePrinter(out)
    printer(MessageSent("user", "assistant", {"role": "user", "name": "user", "content": "hi"}))
    printer(Handoff("a", "b", "handoff"))

    text = out.getvalue()
    assert text.startswith("\x1b[33muser (to assistant):\x1b[0m\n\nhi\n")
    assert "\x1b[35m>>>>>>>> handoff: a -> b\x1b[0m" in text
    assert re.sub(r"\x1b\[[0-9;]*m", "", text) == printed(
        MessageSent("user", "assistant", {"role": "user", "name": "user", "content": "hi"}),
        Handoff("a", "b", "handoff"),
    )


def test_the_terminals_colours_are_worked_out_once(fresh_terminal):
    first = terminal_colours()

    assert terminal_colours() is first
    assert ConsolePrinter(FakeTerminal()).colours is first
    assert first.speaker == "\x1b[32m" and first.reset == "\x1b[0m"


def test_no_color_turns_colours_off_at_a_terminal(fresh_terminal, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")

    assert terminal_colours() == PLAIN
    assert ConsolePrinter(FakeTerminal()).colours == PLAIN


def test_a_file_gets_plain_text_even_when_colours_are_known(fresh_terminal):
    terminal_colours()

    assert ConsolePrinter(io.StringIO()).colours is PLAIN
    assert ConsolePrinter(io.StringIO(), colours=Colours(alert="<")).colours.alert == "<"


def test_printing_to_a_pipe_does_not_load_rich():
    code = (
        "import sys\n"
        "from parley import ConversableAgent\n"
        "a = ConversableAgent('a', llm_config=False, human_input_mode='NEVER', default_auto_reply='ok')\n"
        "b = ConversableAgent('b', llm_config=False, human_input_mode='NEVER', default_auto_reply='ok')\n"
        "a.initiate_chat(b, 'hello', max_turns=1)\n"
        "print('rich loaded:', any(name.startswith('rich') for name in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)

    assert done.stdout.startswith(f"a (to b):\n\nhello\n\n{RULE}\n")
    assert done.stdout.endswith("rich loaded: False\n")


@pytest.mark.parametrize("depth", ["standard", "256", "truecolor"])
def test_the_terminal_colours_are_the_escape_codes_rich_renders_for_their_names(depth: str):
    from rich.color import ColorSystem
    from rich.style import Style

    system = {"standard": ColorSystem.STANDARD, "256": ColorSystem.EIGHT_BIT}.get(
        depth, ColorSystem.TRUECOLOR
    )
    for style, colour in TERMINAL_COLOURS.items():
        start, _, end = Style.parse(colour).render("\0", color_system=system).partition("\0")
        assert (getattr(ANSI, style), ANSI.reset) == (start, end), style


@pytest.mark.parametrize("term", ["dumb", "unknown", "DUMB"])
def test_a_dumb_terminal_gets_no_colours(fresh_terminal, monkeypatch, term: str):
    monkeypatch.setenv("TERM", term)

    assert terminal_colours() == PLAIN


def test_an_empty_no_color_leaves_colours_on(fresh_terminal, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "")

    assert terminal_colours() == ANSI


def test_printing_at_a_terminal_does_not_load_rich():
    code = (
        "import os, pty, sys\n"
        "controller, terminal = pty.openpty()\n"
        "out = open(terminal, 'w', buffering=1)\n"
        "from parley import ConversableAgent\n"
        "a = ConversableAgent('a', llm_config=False, human_input_mode='NEVER', default_auto_reply='ok')\n"
        "b = ConversableAgent('b', llm_config=False, human_input_mode='NEVER', default_auto_reply='ok')\n"
        "sys.stdout, real = out, sys.stdout\n"
        "a.initiate_chat(b, 'hello', max_turns=1)\n"
        "sys.stdout = real\n"
        "print(os.read(controller, 10000).decode())\n"
        "print('rich loaded:', any(name.startswith('rich') for name in sys.modules))\n"
    )
    environment = {**os.environ, "TERM": "xterm-256color"}
    environment.pop("NO_COLOR", None)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=environment
    )

    assert "\x1b[33ma (to b):\x1b[0m" in done.stdout
    assert done.stdout.endswith("rich loaded: False\n")


# what a chat's console holds, and when it writes it ---------------------------------------------------


class CountedWrites(io.StringIO):
    """An output that counts its writes."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, text: str) -> int:
        self.writes += 1
        return super().write(text)


def ring(handoffs: int) -> tuple[SwarmAgent, list[SwarmAgent]]:
    """Three agents that hand the conversation round: a -> b -> c -> a, ``handoffs`` times in all."""
    names = ["a", "b", "c"]
    agents = [
        SwarmAgent(
            name,
            llm_config=ScriptedModel(
                [[tool_call(f"transfer_to_{names[(i + 1) % 3]}", id=f"{name}{k}")] for k in range(handoffs)]
            ),
            human_input_mode="NEVER",
        )
        for i, name in enumerate(names)
    ]
    for i, agent in enumerate(agents):
        agent.register_hand_off(ON_CONDITION(agents[(i + 1) % 3], "next"))
    return agents[0], agents


def test_what_is_held_for_one_output_is_written_before_text_for_another_is_held():
    first, second = CountedWrites(), CountedWrites()
    to_first, to_second = ConsolePrinter(first, hold=True), ConsolePrinter(second, hold=True)
    to_first(Notice("a"))
    to_first(Notice("b"))
    assert first.getvalue() == ""

    to_second(Notice("c"))
    assert (first.getvalue(), first.writes) == ("\n>>>>>>>> a\n\n>>>>>>>> b\n", 1)
    assert second.getvalue() == ""

    release()
    assert (second.getvalue(), second.writes) == ("\n>>>>>>>> c\n", 1)
    release()
    assert (first.writes, second.writes) == (1, 1)


def test_a_printed_swarm_writes_each_handoff_at_once_with_the_same_text(monkeypatch):
    held = CountedWrites()
    monkeypatch.setattr("sys.stdout", held)
    first, agents = ring(4)
    initiate_swarm_chat(first, "start", agents, max_rounds=13)

    unheld = io.StringIO()
    monkeypatch.setattr("sys.stdout", unheld)
    monkeypatch.setattr("parley.engine.ConsolePrinter", lambda **kw: ConsolePrinter())
    first, agents = ring(4)
    initiate_swarm_chat(first, "start", agents, max_rounds=13)

    assert held.getvalue() == unheld.getvalue()
    assert held.getvalue().count(">>>>>>>> handoff:") == 11
    # the first message; one write per handoff (the call, its execution, its result, the handoff) up
    # to the model call after it; the last call with the chat's end
    assert held.writes == 1 + 11 + 1


def in_order(out: str, texts: list[str]) -> bool:
    """Whether ``out`` has each of ``texts``, each after the one before."""
    place = 0
    for text in texts:
        place = out.find(text, place)
        if place < 0:
            return False
        place += len(text)
    return True


def test_what_the_users_code_prints_comes_after_the_events_before_it(capsys):
    def lookup(city: str) -> str:
        """The weather."""
        print("TOOL RAN")
        return "sunny"

    class PrintingModel(ScriptedModel):
        def create(self, *args: Any, **kwargs: Any) -> Any:
            print("MODEL ASKED")
            return super().create(*args, **kwargs)

    assistant = SwarmAgent(
        "assistant",
        llm_config=PrintingModel(
            [[tool_call("lookup", {"city": "Oslo"}, id="c1")], "Sunny in Oslo.", "Bye."]
        ),
        functions=[lookup],
        human_input_mode="NEVER",
    )
    user = SwarmAgent("user", human_input_mode="NEVER", llm_config=False, default_auto_reply="thanks")

    def after_user(last_speaker: Any, messages: Any, groupchat: Any) -> Any:
        print("AFTER WORK CHOSE")
        return assistant

    assistant.register_hand_off(AFTER_WORK(user))
    user.register_hand_off(AFTER_WORK(after_user))
    user.register_reply([Agent, None], lambda *a, **k: print("REPLY FUNCTION") or (False, None))

    initiate_swarm_chat(assistant, "weather?", [assistant, user], max_rounds=5)

    out = capsys.readouterr().out
    order = [
        "weather?",
        "MODEL ASKED",
        "Suggested tool call (c1): lookup",
        "EXECUTING FUNCTION lookup",
        "TOOL RAN",
        "Response from calling tool (c1)",
        "MODEL ASKED",
        "Sunny in Oslo.",
        "REPLY FUNCTION",
        "user (to chat_manager):\n\nthanks",
        "AFTER WORK CHOSE",
        "MODEL ASKED",
    ]
    assert in_order(out, order), out


def test_a_group_chats_speaker_function_and_a_humans_prompt_come_after_what_was_said(capsys, monkeypatch):
    assistant = ConversableAgent("assistant", llm_config=ScriptedModel(["first", "second"]))
    human = ConversableAgent("human", llm_config=False, human_input_mode="ALWAYS")
    monkeypatch.setattr(human, "get_human_input", lambda prompt: print("HUMAN ASKED") or "exit")

    def choose(last_speaker: Any, groupchat: Any) -> Any:
        print(f"CHOOSING AFTER {last_speaker.name}")
        return assistant if last_speaker is human else human

    group = GroupChat([human, assistant], messages=[], max_round=4, speaker_selection_method=choose)
    manager = GroupChatManager(group, llm_config=False)
    human.initiate_chat(manager, message="hello")

    out = capsys.readouterr().out
    order = [
        "human (to chat_manager):\n\nhello",
        "CHOOSING AFTER human",
        "assistant (to chat_manager):\n\nfirst",
        "CHOOSING AFTER assistant",
        "HUMAN ASKED",
    ]
    assert in_order(out, order), out


def test_a_chat_that_fails_still_prints_what_was_said_before(capsys):
    def is_termination_msg(message: dict[str, Any]) -> bool:
        if message.get("content") == "more":
            raise RuntimeError("cannot tell")
        return False

    assistant = ConversableAgent(
        "assistant", llm_config=ScriptedModel(["first"]), is_termination_msg=is_termination_msg
    )
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER", default_auto_reply="more")

    with pytest.raises(RuntimeError, match="cannot tell"):
        user.initiate_chat(assistant, message="hello", max_turns=3)

    assert in_order(
        capsys.readouterr().out,
        ["assistant (to user):\n\nfirst", "user (to assistant):\n\nmore", "CHAT STOPPED: RuntimeError"],
    )


def test_a_nested_chat_prints_in_its_place(capsys):
    inner = ConversableAgent("inner", llm_config=ScriptedModel(["inner answer"]))
    helper = ConversableAgent("helper", llm_config=False, human_input_mode="NEVER")
    outer = ConversableAgent("outer", llm_config=False, human_input_mode="NEVER")
    outer.register_nested_chats(
        [{"recipient": inner, "sender": helper, "max_turns": 1}], trigger=lambda s: True
    )
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER", default_auto_reply="ok")

    user.initiate_chat(outer, message="question", max_turns=1)

    out = capsys.readouterr().out
    order = [
        "user (to outer):\n\nquestion",
        "helper (to inner):\n\nquestion",
        "inner (to helper):\n\ninner answer",
        "outer (to user):\n\ninner answer",
    ]
    assert in_order(out, order), out


def test_what_an_agent_made_silent_sends_is_not_printed(capsys):
    quiet = ConversableAgent("quiet", llm_config=False, human_input_mode="NEVER", silent=True)
    loud = ConversableAgent(
        "loud", llm_config=False, human_input_mode="NEVER", default_auto_reply="loud says"
    )

    result = quiet.initiate_chat(loud, "hi", max_turns=1)

    out = capsys.readouterr().out
    assert [m["content"] for m in result.chat_history] == ["hi", "loud says"]
    assert "quiet (to loud)" not in out and "hi\n" not in out, "AG2 does not print what it sends"
    assert "loud (to quiet):\n\nloud says\n" in out


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_streamed_reply_at_a_terminal_reads_line_by_line():
    from parley.models.streaming import StreamedText

    out = _Terminal()
    console = ConsolePrinter(out, colours=PLAIN)
    show = console.stream_to("assistant")
    assert show is not None

    for piece in [
        StreamedText("PART"),
        StreamedText("", broken_off=True),  # its model failed; another answers
        StreamedText("Checking"),
        StreamedText('{"city": "Paris"}', "get_weather", 0),
        StreamedText('{"city": "Rome"}', "get_weather", 1),
    ]:
        show(piece)
    console(MessageSent("assistant", "user", {"role": "assistant", "content": "Checking", "name": "x"}))

    assert out.getvalue().startswith(
        "assistant (streaming):\nPART\n(the stream broke off; another model answers)\n"
        "assistant (streaming):\nChecking\n"
        'calling get_weather: {"city": "Paris"}\n'
        'calling get_weather: {"city": "Rome"}\n'
        "assistant (to user):\n\nChecking\n"
    )
