"""Speaker selection: "auto" with a scripted manager model (what it sees, tolerant matching, retries,
fallback) and "manual" through get_human_input."""

from __future__ import annotations

import asyncio
import io
from typing import Any

import pytest

from conftest import human, speakers
from parley import Agent, ConversableAgent, GroupChat, GroupChatManager, ScriptedModel, StopKind, tool_call
from parley.events import ConsolePrinter
from parley.models import ModelResponse, Usage
from parley.speaker_selection import mentioned_agents


@pytest.fixture
def abc(quiet_agent):
    return [
        quiet_agent(name, f"{name.upper()}-says", description=f"Agent {name} description") for name in "abc"
    ]


def auto_group(
    agents: list[ConversableAgent], replies: list[Any], **kwargs: Any
) -> tuple[GroupChatManager, ScriptedModel]:
    model = ScriptedModel(replies)
    kwargs.setdefault("max_round", 2)
    groupchat = GroupChat(agents, messages=[], speaker_selection_method="auto", **kwargs)
    return GroupChatManager(groupchat, llm_config=model), model


def names(manager: GroupChatManager) -> list[str]:
    """The speakers, in order, as the group chat's messages name them."""
    return [message["name"] for message in manager.groupchat.messages]


SYSTEM = (
    "You decide who speaks next in a conversation between several participants. The participants and "
    "what each of them does:\na: Agent a description\nb: Agent b description\nc: Agent c description\n\n"
    "Read the conversation that follows. Then choose the one participant from ['a', 'b', 'c'] who should "
    "speak next, and answer with that name only."
)
PROMPT = "Who should speak next? Answer with exactly one name from ['a', 'b', 'c'] and nothing else."


# auto: what the model sees ---------------------------------------------------------------------------


def test_auto_asks_the_managers_model_with_roles_conversation_and_prompt(abc):
    manager, model = auto_group(abc, ["b", "I choose c"], max_round=3)

    result = abc[0].initiate_chat(manager, "start", silent=True)

    assert speakers(result) == ["a", "b", "c"]
    assert [request.messages for request in model.requests] == [
        [
            {"role": "system", "content": SYSTEM},
            {"content": "start", "role": "user", "name": "a"},
            {"role": "system", "content": PROMPT},
        ],
        [
            {"role": "system", "content": SYSTEM},
            {"content": "start", "role": "user", "name": "a"},
            {"content": "B-says", "role": "user", "name": "b"},
            {"role": "system", "content": PROMPT},
        ],
    ]
    assert model.requests[0].tools == []


def test_auto_retries_telling_the_model_what_was_wrong(abc):
    manager, model = auto_group(abc, ["nonsense", "b or c", "c"])

    abc[0].initiate_chat(manager, "start", silent=True)

    assert names(manager) == ["a", "c"]
    assert model.requests[2].messages[3:] == [
        {"role": "assistant", "content": "nonsense"},
        {
            "role": "system",
            "content": "Your answer did not name any participant. Answer with exactly one of these names, "
            "spelled as written: ['a', 'b', 'c']. Give only the name, no explanation.",
        },
        {"role": "assistant", "content": "b or c"},
        {
            "role": "system",
            "content": "Your answer named more than one participant. Decide on the single participant who "
            "should speak next and answer with only that name, one of ['a', 'b', 'c'].",
        },
    ]


def test_auto_falls_back_to_round_robin_and_says_so(abc, monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr("parley.engine.ConsolePrinter", lambda **kw: ConsolePrinter(out, **kw))
    manager, model = auto_group(abc, ["nonsense", "still nothing", "nope"])

    result = abc[0].initiate_chat(manager, "start")

    assert names(manager) == ["a", "b"]
    assert len(model.requests) == 3
    assert (
        "SPEAKER SELECTION FAILED: the model did not name exactly one of ['a', 'b', 'c'] in 3 attempt(s) "
        "(last answer: 'nope'); b is next in turn." in out.getvalue()
    )
    assert result.stop_reason.kind is StopKind.MAX_ROUND


def test_max_retries_0_asks_once(abc):
    manager, model = auto_group(abc, ["nonsense"], max_retries_for_selecting_speaker=0)

    abc[0].initiate_chat(manager, "start", silent=True)

    assert names(manager) == ["a", "b"]
    assert len(model.requests) == 1


def test_without_repeats_the_last_speaker_is_not_offered(abc):
    manager, model = auto_group(abc, ["c"], allow_repeat_speaker=False)

    abc[0].initiate_chat(manager, "start", silent=True)

    system = model.requests[0].messages[0]["content"]
    assert "a: Agent a description" not in system
    assert "['b', 'c']" in system
    assert model.requests[0].messages[-1]["content"].endswith("one name from ['b', 'c'] and nothing else.")


def test_a_single_candidate_speaks_without_asking_the_model(abc):
    a, b, c = abc
    manager, model = auto_group(
        abc,
        [],
        max_round=4,
        allowed_or_disallowed_speaker_transitions={a: [b], b: [c], c: [a]},
        speaker_transitions_type="allowed",
    )

    a.initiate_chat(manager, "start", silent=True)

    assert names(manager) == ["a", "b", "c", "a"]
    assert model.requests == []


def test_the_graph_limits_what_the_model_may_choose(abc):
    a, b, c = abc
    manager, model = auto_group(
        abc,
        ["a", "c"],
        allowed_or_disallowed_speaker_transitions={a: [b, c]},
        speaker_transitions_type="allowed",
    )

    a.initiate_chat(manager, "start", silent=True)

    assert names(manager) == ["a", "c"]
    assert "['b', 'c']" in model.requests[0].messages[0]["content"]


def test_custom_templates_role_and_no_closing_prompt(abc):
    manager, model = auto_group(
        abc,
        ["b"],
        select_speaker_message_template="Team:\n{roles}\nPick one of {agentlist}. Literal {{braces}}.",
        select_speaker_prompt_template=None,
        role_for_select_speaker_messages="user",
    )

    abc[0].initiate_chat(manager, "start", silent=True)

    assert model.requests[0].messages == [
        {
            "role": "system",
            "content": "Team:\na: Agent a description\nb: Agent b description\nc: Agent c description\n"
            "Pick one of ['a', 'b', 'c']. Literal {braces}.",
        },
        {"content": "start", "role": "user", "name": "a"},
    ]


def test_the_retry_role_follows_role_for_select_speaker_messages(abc):
    manager, model = auto_group(abc, ["?", "b"], role_for_select_speaker_messages="user")

    abc[0].initiate_chat(manager, "start", silent=True)

    assert [message["role"] for message in model.requests[1].messages] == [
        "system",
        "user",
        "user",
        "assistant",
        "user",
    ]


def test_tool_traffic_reaches_the_selector_as_text(quiet_agent):
    caller = ConversableAgent(
        "caller",
        llm_config=ScriptedModel([tool_call("add", {"x": 1}, id="call_1")]),
        human_input_mode="NEVER",
    )
    executor = quiet_agent("executor")
    executor.register_function({"add": lambda x: x + 1})
    other = quiet_agent("other")
    manager, model = auto_group([caller, executor, other], ["caller", "other"], max_round=4)

    other.initiate_chat(manager, "go", silent=True)

    assert names(manager) == ["other", "caller", "executor", "other"]
    assert len(model.requests) == 2  # only the executor could follow the call: nobody was asked
    conversation = model.requests[1].messages[1:-1]
    assert conversation == [
        {"content": "go", "role": "user", "name": "other"},
        {"role": "user", "name": "caller", "content": '[calls add({"x": 1})]'},
        {"role": "user", "name": "executor", "content": "2"},
    ]


def test_selection_usage_counts_in_the_chat_cost(abc):
    response = ModelResponse({"role": "assistant", "content": "b"}, Usage(10, 1), cost=0.5, model="m")
    manager, _ = auto_group(abc, [response])

    result = abc[0].initiate_chat(manager, "start", silent=True)

    assert result.cost["usage_including_cached_inference"]["total_cost"] == 0.5
    assert manager.usage_summary.to_dict()["usage_including_cached_inference"]["m"]["prompt_tokens"] == 10


def test_auto_selection_in_an_async_chat(abc):
    manager, _ = auto_group(abc, ["c"])

    result = asyncio.run(abc[0].a_initiate_chat(manager, "start", silent=True))

    assert speakers(result) == ["a", "c"]


def test_the_selector_reads_only_new_messages_each_step(abc):
    manager, model = auto_group(abc, ["b", "c", "a", "b"], max_round=5)

    abc[0].initiate_chat(manager, "start", silent=True)

    assert names(manager) == ["a", "b", "c", "a", "b"]
    assert [len(request.messages) for request in model.requests] == [3, 4, 5, 6]


# auto: tolerant name matching ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("planner", ["planner"]),
        ("  Planner. ", ["planner"]),
        ("**coder**", ["coder"]),
        ("`senior_writer`", ["senior_writer"]),
        ("senior writer", ["senior_writer"]),
        ("senior\\_writer should go", ["senior_writer"]),
        ("I think the coder should speak next", ["coder"]),
        ("CODER", ["coder"]),
        ("The next speaker is Planner", ["planner"]),
        ("writer", ["writer"]),
        ("the senior writer, not the planner", ["planner", "senior_writer"]),
        ("coders", []),
        ("nobody", []),
        ("planner or coder", ["planner", "coder"]),
    ],
)
def test_mentioned_agents(answer, expected):
    candidates = [Agent(name) for name in ("planner", "coder", "writer", "senior_writer")]

    assert [agent.name for agent in mentioned_agents(answer, candidates)] == expected


def test_a_case_sensitive_mention_wins_over_case_insensitive_ones():
    candidates = [Agent("Bob"), Agent("bob_helper")]

    assert [a.name for a in mentioned_agents("Bob, says BOB_HELPER", candidates)] == ["Bob"]


# manual ----------------------------------------------------------------------------------------------


def manual_group(agents: list[ConversableAgent], *answers: str, **kwargs: Any):
    kwargs.setdefault("max_round", 3)
    groupchat = GroupChat(agents, messages=[], speaker_selection_method="manual", **kwargs)
    manager = GroupChatManager(groupchat, llm_config=False)
    return manager, human(manager, *answers)


MENU = (
    "Choose the next speaker:\n1: a\n2: b\n3: c\n"
    "Enter a number or a name (press enter or type 'q' to let the next in turn speak, "
    "or type 'exit' to end the conversation): "
)


def test_manual_asks_the_human_through_get_human_input(abc):
    manager, scripted = manual_group(abc, "3", "2")

    result = abc[0].initiate_chat(manager, "start", silent=True)

    assert names(manager) == ["a", "c", "b"]
    assert scripted.prompts == [MENU, MENU]
    assert result.human_input == ["3", "2"]


def test_manual_accepts_a_name(abc):
    manager, _ = manual_group(abc, "c", max_round=2)

    abc[0].initiate_chat(manager, "start", silent=True)

    assert names(manager) == ["a", "c"]


def test_manual_asks_again_after_invalid_input(abc):
    manager, scripted = manual_group(abc, "x", "9", "2", max_round=2)

    abc[0].initiate_chat(manager, "start", silent=True)

    assert names(manager) == ["a", "b"]
    assert scripted.prompts[1] == "'x' is not one of the choices: enter a number from 1 to 3.\n" + MENU
    assert scripted.prompts[2] == "'9' is not one of the choices: enter a number from 1 to 3.\n" + MENU


@pytest.mark.parametrize("answers", [("",), ("q",), ("0", "-1", "zz")])
def test_manual_falls_back_to_the_next_in_turn(abc, answers, monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr("parley.engine.ConsolePrinter", lambda **kw: ConsolePrinter(out, **kw))
    manager, scripted = manual_group(abc, *answers, max_round=2)

    abc[0].initiate_chat(manager, "start")

    assert names(manager) == ["a", "b"]
    assert len(scripted.prompts) == len(answers)
    assert "b is next in turn." in out.getvalue()


def test_manual_exit_ends_the_chat(abc):
    manager, _ = manual_group(abc, "2", "exit", max_round=10)

    result = abc[0].initiate_chat(manager, "start", silent=True)

    assert speakers(result) == ["a", "b"]
    assert result.stop_reason.kind is StopKind.HUMAN_EXIT
    assert result.stop_reason.agent == "chat_manager"


def test_manual_offers_only_the_allowed_agents(abc):
    a, _, c = abc
    manager, scripted = manual_group(
        abc,
        "2",
        max_round=2,
        allowed_or_disallowed_speaker_transitions={a: [a, c]},
        speaker_transitions_type="allowed",
    )

    a.initiate_chat(manager, "start", silent=True)

    assert names(manager) == ["a", "c"]
    assert scripted.prompts[0].startswith("Choose the next speaker:\n1: a\n2: c\n")


def test_manual_in_an_async_chat_awaits_an_async_human(abc):
    groupchat = GroupChat(abc, max_round=2, speaker_selection_method="manual")
    manager = GroupChatManager(groupchat, llm_config=False)
    prompts: list[str] = []

    async def answer(prompt: str, **kwargs: Any) -> str:
        prompts.append(prompt)
        return "3"

    manager.get_human_input = answer  # type: ignore[method-assign]

    result = asyncio.run(abc[0].a_initiate_chat(manager, "start", silent=True))

    assert speakers(result) == ["a", "c"]
    assert prompts == [MENU]


def test_auto_reads_a_message_replaced_in_the_groups_messages(abc):
    a, b, _ = abc
    manager, model = auto_group(abc, ["b", "c"], max_round=3)

    def redact(recipient: Any, messages: Any = None, sender: Any = None, config: Any = None) -> Any:
        manager.groupchat.messages[0] = {"content": "[REDACTED]", "role": "user", "name": "a"}
        return False, None

    b.register_reply([Agent, None], redact)
    a.initiate_chat(manager, "my password is hunter2", silent=True)

    conversation = [message["content"] for message in model.requests[1].messages[1:-1]]
    assert conversation == ["[REDACTED]", "B-says"]
