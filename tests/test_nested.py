"""Nested chats, chat queues and carryover, including a swarm inside a nested chat."""

from __future__ import annotations

from typing import Any

import pytest

from parley import (
    AFTER_WORK,
    ON_CONDITION,
    Agent,
    ConversableAgent,
    ScriptedModel,
    StopKind,
    SwarmAgent,
    initiate_chats,
    initiate_swarm_chat,
    tool_call,
)

PARENT = [
    {"role": "user", "content": "m1", "name": "user"},
    {"role": "assistant", "content": "m2", "name": "a"},
    {"role": "assistant", "content": None, "tool_calls": [tool_call("t")], "name": "a"},
    {"role": "user", "content": "m3", "name": "user"},
    {"role": "assistant", "content": "m4", "name": "a"},
]


def quiet(name: str, *replies: Any, **kwargs: Any) -> ConversableAgent:
    kwargs.setdefault("human_input_mode", "NEVER")
    llm_config = ScriptedModel(list(replies)) if replies else False
    return ConversableAgent(name, llm_config=llm_config, default_auto_reply=f"{name} auto", **kwargs)


def carried(method: Any, trim: int, *, recipient: ConversableAgent | None = None, **config: Any) -> str:
    nested = recipient or quiet("nested")
    chat = {
        "recipient": nested,
        "message": "Nested task",
        "carryover_config": {"summary_method": method, **config},
    }
    SwarmAgent.process_nested_chat_carryover(
        chat, quiet("outer"), PARENT, quiet("sender"), trim_n_messages=trim
    )
    return chat["message"]


# process_nested_chat_carryover -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("trim", "expected"),
    [
        (0, "Nested task\nContext:\nm1\nm2\nm3\nm4"),
        (2, "Nested task\nContext:\nm1\nm2"),
        (3, "Nested task\nContext:\nm1\nm2"),  # the latest three of the list: m4, m3 and the tool call
    ],
)
def test_carryover_all(trim, expected):
    assert carried("all", trim) == expected


@pytest.mark.parametrize(
    ("trim", "expected"), [(0, "Nested task\nContext:\nm4"), (2, "Nested task\nContext:\nm2")]
)
def test_carryover_last_msg(trim, expected):
    assert carried("last_msg", trim) == expected


@pytest.mark.parametrize(("trim", "seen"), [(0, ["m1", "m2", "m3", "m4"]), (2, ["m1", "m2"])])
def test_carryover_reflection_with_llm_summarizes_with_the_nested_recipients_model(trim, seen):
    model = ScriptedModel(["the summary"])
    nested = ConversableAgent("nested", llm_config=model)

    message = carried(
        "reflection_with_llm", trim, recipient=nested, summary_args={"summary_prompt": "Sum up."}
    )

    assert message == "Nested task\nContext:\nthe summary"
    assert [m["content"] for m in model.requests[0].messages] == [*seen, "Sum up."]
    assert model.requests[0].messages[-1]["role"] == "system"


@pytest.mark.parametrize(("trim", "count"), [(0, 5), (2, 3)])
def test_carryover_callable_gets_the_parent_messages_left_after_trimming(trim, count):
    def summarize(agent: ConversableAgent, messages: list[dict[str, Any]]) -> str:
        return f"{agent.name} saw {len(messages)}"

    assert carried(summarize, trim) == f"Nested task\nContext:\nouter saw {count}"


def test_carryover_without_a_message_and_with_bad_config():
    chat: dict[str, Any] = {"carryover_config": {"summary_method": "last_msg"}}
    SwarmAgent.process_nested_chat_carryover(chat, quiet("r"), PARENT, quiet("s"))
    assert chat["message"] == "Context:\nm4"

    with pytest.raises(ValueError, match="summary_method"):
        SwarmAgent.process_nested_chat_carryover({"carryover_config": {}}, quiet("r"), PARENT, quiet("s"))
    with pytest.raises(ValueError, match="unknown carryover summary_method 'bogus'"):
        carried("bogus", 0)
    with pytest.raises(ValueError, match="trim_n_messages"):
        carried("all", -1)


def test_carryover_of_an_empty_conversation_is_empty():
    chat = {"message": "task", "carryover_config": {"summary_method": "last_msg"}}
    SwarmAgent.process_nested_chat_carryover(chat, quiet("r"), [], quiet("s"))
    assert chat["message"] == "task\nContext:\n"


# chat queues ----------------------------------------------------------------------------------------


def test_initiate_chats_carries_each_summary_into_the_next_chat():
    lead, writer, editor = quiet("lead"), quiet("writer", "draft v1"), quiet("editor", "edited")

    results = initiate_chats(
        [
            {"sender": lead, "recipient": writer, "message": "Write.", "max_turns": 1, "silent": True},
            {"sender": lead, "recipient": editor, "message": "Edit.", "max_turns": 1, "silent": True},
        ]
    )

    assert [r.summary for r in results] == ["draft v1", "edited"]
    assert results[1].chat_history[0]["content"] == "Edit.\nContext: \ndraft v1"


def test_nested_chats_answer_with_the_summary_of_the_queue():
    expert = quiet("expert", "The answer is 42.")
    assistant = quiet("assistant")
    assistant.register_nested_chats(
        [{"recipient": expert, "max_turns": 1, "summary_method": "last_msg", "silent": True}], trigger=Agent
    )
    user = quiet("user")

    result = user.initiate_chat(assistant, "What is the answer?", max_turns=1, silent=True)

    assert result.chat_history[1]["content"] == "The answer is 42."
    assert expert.client.requests[0].messages[-1]["content"] == "What is the answer?"


def test_an_agent_in_a_swarm_runs_a_nested_chat_and_hands_its_summary_back():
    expert = quiet("expert", "Use a torque wrench.")
    researcher = SwarmAgent("researcher", llm_config=False, human_input_mode="NEVER")
    researcher.register_nested_chats(
        [
            {
                "recipient": expert,
                "message": "Advice needed",
                "carryover_config": {"summary_method": "last_msg"},
                "max_turns": 1,
                "silent": True,
            }
        ],
        trigger=Agent,
    )
    writer = SwarmAgent(
        "writer", llm_config=ScriptedModel(["Report: use a torque wrench."]), human_input_mode="NEVER"
    )
    researcher.register_hand_off(AFTER_WORK(writer))

    result, _, _ = initiate_swarm_chat(researcher, "How to fix the wheel?", [researcher, writer], silent=True)

    assert [(m.get("name"), m["content"]) for m in result.chat_history] == [
        (None, "How to fix the wheel?"),
        ("researcher", "Use a torque wrench."),
        ("writer", "Report: use a torque wrench."),
    ]
    assert (
        expert.client.requests[0].messages[-1]["content"] == "Advice needed\nContext:\nHow to fix the wheel?"
    )


def test_a_swarm_inside_a_nested_chat():
    triage = SwarmAgent(
        "triage", llm_config=ScriptedModel([[tool_call("transfer_to_billing")]]), human_input_mode="NEVER"
    )
    billing = SwarmAgent(
        "billing", llm_config=ScriptedModel(["Refund of $5 issued."]), human_input_mode="NEVER"
    )
    triage.register_hand_off(ON_CONDITION(billing, "billing questions"))
    desk = quiet("desk")
    desk.register_nested_chats(
        [{"swarm": {"initial_agent": triage, "agents": [triage, billing], "max_rounds": 10}, "silent": True}],
        trigger=Agent,
    )
    customer = quiet("customer")

    result = customer.initiate_chat(desk, "I was charged twice", max_turns=1, silent=True)

    assert result.chat_history[1]["content"] == "Refund of $5 issued."
    assert triage.client.requests[0].messages[-1] == {
        "content": "I was charged twice",
        "role": "user",
        "name": "_User",
    }
    assert result.stop_reason.kind is StopKind.MAX_TURNS


async def test_nested_chats_in_an_async_chat():
    expert = quiet("expert", "async answer")
    assistant = quiet("assistant")
    assistant.register_nested_chats([{"recipient": expert, "max_turns": 1, "silent": True}], trigger=Agent)

    result = await quiet("user").a_initiate_chat(assistant, "q", max_turns=1, silent=True)

    assert result.chat_history[1]["content"] == "async answer"


def test_bad_chat_queues():
    agent = quiet("agent")
    with pytest.raises(ValueError, match="non-empty list"):
        agent.register_nested_chats([], trigger=Agent)
    with pytest.raises(ValueError, match="needs a 'recipient'"):
        initiate_chats([{"sender": agent, "message": "hi"}])


@pytest.mark.parametrize("chat_id", ["", "  ", 7])
def test_a_chat_queue_kept_in_a_store_needs_a_chat_id_that_names_it(chat_id: Any):
    agent, other = quiet("agent"), quiet("other")
    with pytest.raises(ValueError, match="a chat_id must be a non-empty string"):
        agent.initiate_chats(
            [{"recipient": other, "message": "hi", "max_turns": 1}], store="memory://", chat_id=chat_id
        )


def test_a_nested_chat_queue_is_checked_when_it_is_registered():
    from parley import ConversableAgent

    agent = ConversableAgent("agent", llm_config=False, human_input_mode="NEVER")
    with pytest.raises(ValueError, match="chat_queue\\[0\\] needs a 'recipient'"):
        agent.register_nested_chats([{"message": "x"}], trigger=None)
    with pytest.raises(TypeError, match="chat_queue\\[1\\] must be a dict, not 'x'"):
        agent.register_nested_chats([{"recipient": agent, "message": "x"}, "x"], trigger=None)
    assert len(agent._reply_func_list) == len(ConversableAgent("other", llm_config=False)._reply_func_list)


# chat queues by chat_id, as AG2 runs them ---------------------------------------------------------------


def _slow_model(name: str, order: list[str]) -> Any:
    import asyncio

    from parley.models import ModelResponse

    class Slow:
        async def a_create(self, messages: Any, tools: Any = None, **params: Any) -> ModelResponse:
            order.append(f"{name} starts")
            await asyncio.sleep(0.05)
            order.append(f"{name} ends")
            return ModelResponse({"role": "assistant", "content": f"{name}: {messages[-1]['content']}"})

        def create(self, messages: Any, tools: Any = None, **params: Any) -> ModelResponse:
            raise RuntimeError("async only")

    return ConversableAgent(name, llm_config=Slow(), human_input_mode="NEVER")


async def test_a_initiate_chats_runs_chats_by_their_prerequisites_and_returns_them_by_chat_id():
    order: list[str] = []
    user = quiet("user")
    r1, r2, r3 = (_slow_model(name, order) for name in ("r1", "r2", "r3"))
    queue = [
        {"chat_id": 1, "recipient": r1, "message": "q1", "max_turns": 1, "silent": True},
        {"chat_id": 2, "recipient": r2, "message": "q2", "max_turns": 1, "silent": True},
        {
            "chat_id": 3,
            "prerequisites": [1, 2],
            "recipient": r3,
            "message": "q3",
            "max_turns": 1,
            "silent": True,
        },
    ]

    results = await user.a_initiate_chats(queue)

    assert list(results) == [1, 2, 3]
    assert order[:2] == ["r1 starts", "r2 starts"], "chats that wait on nothing run at once"
    assert order[-2:] == ["r3 starts", "r3 ends"], "a chat waits for its prerequisites"
    assert results[3].chat_history[0]["content"] == "q3\nContext: \nr1: q1\nr2: q2"


async def test_durable_a_initiate_chats_keeps_its_chats_by_queue_position_whatever_finishes_first():
    """A re-run returns the finished chats at once, so they start in another order: each chat's id comes
    from its place in the queue, and each chat gets its own recorded result back."""
    import asyncio

    from parley import FunctionModel
    from parley.store import MemoryStore

    def worker(name: str, delay: float) -> ConversableAgent:
        async def reply(request: Any) -> str:
            await asyncio.sleep(delay)
            return f"{name} answers {request.messages[-1]['content'].splitlines()[-1]}"

        return ConversableAgent(name, llm_config=FunctionModel(reply), human_input_mode="NEVER")

    def queue() -> list[dict[str, Any]]:
        slow, fast, after = worker("slow", 0.05), worker("fast", 0.0), worker("after", 0.0)
        common = {"max_turns": 1, "silent": True, "summary_method": "last_msg"}
        return [
            {"chat_id": "a", "recipient": slow, "message": "task A", **common},
            {"chat_id": "b", "recipient": fast, "message": "task B", **common},
            {"chat_id": "c", "recipient": after, "message": "follow up", "prerequisites": ["a"], **common},
            {"chat_id": "d", "recipient": after, "message": "follow up", "prerequisites": ["b"], **common},
        ]

    store = MemoryStore()
    user = quiet("user")
    first = await user.a_initiate_chats(queue(), store=store, chat_id="q")
    again = await user.a_initiate_chats(queue(), store=store, chat_id="q")

    assert [first[key].chat_id for key in "abcd"] == ["q", "q.2", "q.3", "q.4"]
    assert first["c"].summary == "after answers slow answers task A"
    assert first["d"].summary == "after answers fast answers task B"
    for key in "abcd":
        assert again[key].chat_id == first[key].chat_id
        assert again[key].chat_history == first[key].chat_history


async def test_a_initiate_chats_says_what_is_wrong_with_a_queue():
    user, r1 = quiet("user"), quiet("r1")
    with pytest.raises(ValueError, match=r"chat_queue\[0\] needs a 'chat_id'"):
        await user.a_initiate_chats([{"recipient": r1, "message": "q"}])
    with pytest.raises(ValueError, match=r"prerequisites \[9\] name no chat_id of the queue"):
        await user.a_initiate_chats([{"chat_id": 1, "prerequisites": [9], "recipient": r1, "message": "q"}])
    with pytest.raises(ValueError, match="go round in a circle"):
        await user.a_initiate_chats(
            [
                {"chat_id": 1, "prerequisites": [2], "recipient": r1, "message": "q"},
                {"chat_id": 2, "prerequisites": [1], "recipient": r1, "message": "q"},
            ]
        )


def test_initiate_chats_takes_ag2s_integer_chat_ids_and_runs_the_chats_in_order():
    user, r1, r2 = quiet("user"), quiet("r1", "R1 answer"), quiet("r2", "R2 answer")
    queue = [
        {"chat_id": 1, "recipient": r1, "message": "q1", "max_turns": 1, "silent": True},
        {
            "chat_id": 2,
            "prerequisites": [1],
            "recipient": r2,
            "message": "q2",
            "max_turns": 1,
            "silent": True,
        },
    ]

    results = user.initiate_chats(queue)

    assert [r.summary for r in results] == ["R1 answer", "R2 answer"]
    assert results[1].chat_history[0]["content"] == "q2\nContext: \nR1 answer"


async def test_nested_chats_with_use_async_run_by_chat_id_and_a_sync_chat_is_an_error():
    order: list[str] = []
    inner = _slow_model("inner", order)
    mid = quiet("mid", "mid's own model")
    mid.register_nested_chats(
        [{"chat_id": 1, "recipient": inner, "max_turns": 1, "silent": True}],
        trigger=ConversableAgent,
        use_async=True,
    )
    user = quiet("user")

    result = await user.a_initiate_chat(mid, "top", max_turns=1, silent=True)
    assert result.summary == "inner: top"

    with pytest.raises(RuntimeError, match="async reply functions"):
        user.initiate_chat(mid, "top", max_turns=1, silent=True)
    with pytest.raises(ValueError, match=r"needs a 'chat_id': use_async"):
        mid.register_nested_chats([{"recipient": inner}], trigger=ConversableAgent, use_async=True)


def test_a_reply_function_of_your_own_runs_the_nested_chats():
    seen: list[Any] = []

    def my_nested_reply(chat_queue, recipient, messages, sender, config):
        seen.append((len(chat_queue), recipient.name, messages[-1]["content"], sender.name))
        return True, f"custom reply to {messages[-1]['content']}"

    mid = quiet("mid", "mid's own model")
    mid.register_nested_chats(
        [{"recipient": quiet("inner")}],
        trigger=ConversableAgent,
        reply_func_from_nested_chats=my_nested_reply,
    )

    result = quiet("user").initiate_chat(mid, "top", max_turns=1, silent=True)

    assert result.summary == "custom reply to top"
    assert seen == [(1, "mid", "top", "user")]

    configured = quiet("configured")
    configured.register_nested_chats(
        [{"recipient": quiet("inner")}],
        trigger=ConversableAgent,
        reply_func_from_nested_chats=lambda queue, recipient, messages, sender, config: (True, repr(config)),
        config={"z": 1},
    )
    result = quiet("user").initiate_chat(configured, "top", max_turns=1, silent=True)
    assert result.summary == "{'z': 1}", "the config reaches the reply function, as register_reply's does"
    with pytest.raises(TypeError, match=r"unexpected keyword arguments \['confg'\]"):
        configured.register_nested_chats([{"recipient": quiet("x")}], trigger=Agent, confg={})
    with pytest.raises(ValueError, match="must be a coroutine function"):
        mid.register_nested_chats(
            [{"chat_id": 1, "recipient": quiet("x")}],
            trigger=Agent,
            reply_func_from_nested_chats=my_nested_reply,
            use_async=True,
        )


def test_a_nested_chats_message_function_gets_the_config_given_at_registration():
    inner_model = ScriptedModel(["Bonjour."])
    inner = ConversableAgent("inner", llm_config=inner_model, human_input_mode="NEVER")
    boss, user = quiet("boss"), quiet("user")

    def message(recipient: Any, messages: Any, sender: Any, config: Any) -> str:
        return f"Translate into {config['language']}: {messages[-1]['content']}"

    boss.register_nested_chats(
        [{"recipient": inner, "message": message, "max_turns": 1, "silent": True}],
        trigger=user,
        config={"language": "French"},
    )
    user.initiate_chat(boss, message="good morning", max_turns=1, silent=True)

    assert inner_model.requests[0].messages[-1]["content"] == "Translate into French: good morning"


def test_a_carryover_reaches_a_first_message_of_content_parts_as_a_text_part_before_them():
    checker_model = ScriptedModel(["Checked."])
    reader = quiet("reader", "The total is 42 EUR.")
    checker = ConversableAgent("checker", llm_config=checker_model, human_input_mode="NEVER")
    parts = [
        {"type": "text", "text": "Check the photo against the total."},
        {"type": "image_url", "image_url": {"url": "http://127.0.0.1/receipt.png"}},
    ]

    quiet("user").initiate_chats(
        [
            {"recipient": reader, "message": "Read the invoice.", "max_turns": 1, "silent": True},
            {"recipient": checker, "message": {"content": parts}, "max_turns": 1, "silent": True},
        ]
    )

    sent = checker_model.requests[0].messages[-1]["content"]
    assert sent == [{"type": "text", "text": "\nContext: \nThe total is 42 EUR."}, *parts]


def test_a_initiate_chats_runs_from_the_top_level_package_as_from_ag2s_agentchat():
    import asyncio

    from parley import a_initiate_chats

    user, first, second = quiet("user"), quiet("first", "One."), quiet("second", "Two.")
    queue = [
        {"chat_id": 1, "sender": user, "recipient": first, "message": "1?", "max_turns": 1, "silent": True},
        {
            "chat_id": 2,
            "prerequisites": [1],
            "sender": user,
            "recipient": second,
            "message": "2?",
            "max_turns": 1,
            "silent": True,
        },
    ]

    results = asyncio.run(a_initiate_chats(queue))

    assert [results[1].summary, results[2].summary] == ["One.", "Two."]
    assert results[2].chat_history[0]["content"] == "2?\nContext: \nOne."


def test_a_nested_chats_failure_leaves_the_outer_conversation_on_the_error():
    from parley import FunctionModel

    def down(request: Any) -> Any:
        raise ConnectionError("model down")

    inner = ConversableAgent("inner", llm_config=FunctionModel(down), human_input_mode="NEVER")
    boss, user = quiet("boss"), quiet("user")
    boss.register_nested_chats(
        [{"recipient": inner, "message": "nested task", "max_turns": 1, "silent": True}], trigger=user
    )

    with pytest.raises(ConnectionError) as raised:
        user.initiate_chat(boss, message="outer question", max_turns=2, silent=True)

    assert [m["content"] for m in raised.value.chat_result.chat_history] == ["outer question"]
    assert [note for note in raised.value.__notes__ if note.startswith("parley:")] == [
        "parley: the chat stopped after 1 messages; "
        "the conversation so far is on this exception's .chat_result"
    ]
