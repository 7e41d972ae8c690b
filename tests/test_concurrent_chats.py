"""One set of agents serves many chats at once: each chat gives exactly the transcript, context and cost
it gives alone."""

from __future__ import annotations

import asyncio
import gc
import threading
from typing import Any

from parley import (
    AFTER_WORK,
    UPDATE_SYSTEM_MESSAGE,
    AfterWorkOption,
    ChatResult,
    ConversableAgent,
    FunctionModel,
    GroupChat,
    GroupChatManager,
    ModelRequest,
    OnCondition,
    SwarmAgent,
    SwarmResult,
    a_initiate_swarm_chat,
    initiate_swarm_chat,
    tool_call,
)
from parley.engine import Chat
from parley.models import ModelResponse, Usage


async def pause(times: int = 3) -> None:
    """Let the other chats run: every model call of these tests yields to the event loop."""
    for _ in range(times):
        await asyncio.sleep(0)


def costed(text: str | list[dict[str, Any]], tokens: int) -> ModelResponse:
    """A reply whose usage and cost depend on the chat it is in."""
    message: dict[str, Any] = (
        {"role": "assistant", "content": text}
        if isinstance(text, str)
        else {"role": "assistant", "content": None, "tool_calls": text}
    )
    return ModelResponse(message, Usage(tokens, 1), cost=tokens / 1000, model="m")


def first_user_text(request: ModelRequest) -> str:
    return next(m["content"] for m in request.messages if m.get("role") == "user")


async def run_alone_and_together(*runs: Any) -> tuple[list[Any], list[Any]]:
    alone = [await run() for run in runs]
    together = await asyncio.gather(*(run() for run in runs))
    return alone, list(together)


def summary_of(result: ChatResult) -> tuple[Any, ...]:
    return (result.chat_history, result.summary, result.cost, result.stop_reason)


async def test_two_chats_between_the_same_two_agents():
    async def reply(request: ModelRequest) -> ModelResponse:
        await pause()
        topic = first_user_text(request)
        turn = sum(1 for m in request.messages if m.get("role") == "assistant")
        return costed(f"{topic} #{turn}", tokens=len(topic) * (turn + 1))

    assistant = ConversableAgent("assistant", llm_config=FunctionModel(reply), human_input_mode="NEVER")
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER", default_auto_reply="go on")

    def chat(topic: str) -> Any:
        return lambda: user.a_initiate_chat(assistant, topic, max_turns=3, silent=True)

    alone, together = await run_alone_and_together(chat("apples"), chat("a much longer topic"))

    assert [summary_of(result) for result in together] == [summary_of(result) for result in alone]
    assert together[0].chat_history[-1]["content"] == "apples #2"
    assert together[1].cost != together[0].cost
    assert together[0].chat_id != together[1].chat_id


async def test_two_swarms_over_the_same_agents_keep_their_own_context():
    offered: list[tuple[str, tuple[str, ...]]] = []

    async def triage_model(request: ModelRequest) -> ModelResponse:
        offered.append((first_user_text(request), tuple(request.tool_names)))
        await pause()
        if request.messages[-1].get("role") == "tool":
            return costed("Passing you on.", tokens=1)
        return costed([tool_call("lookup", id="look")], tokens=2)

    async def billing_model(request: ModelRequest) -> ModelResponse:
        await pause()
        system = request.messages[0]["content"]
        return costed(f"[{system}] {request.messages[-1]['content']}", tokens=len(system))

    async def lookup(context_variables: dict[str, Any]) -> SwarmResult:
        await pause()
        customer = context_variables["customer"]
        return SwarmResult(
            values=f"{customer} owes {context_variables['balance']}",
            context_variables={"looked_up": customer},
            agent="billing",
        )

    triage = SwarmAgent("triage", llm_config=FunctionModel(triage_model), functions=[lookup])
    billing = SwarmAgent(
        "billing",
        llm_config=FunctionModel(billing_model),
        update_agent_state_before_reply=[UPDATE_SYSTEM_MESSAGE("Help {customer}, who owes {balance}.")],
    )
    vip = SwarmAgent("vip", llm_config=FunctionModel(billing_model))
    triage.register_hand_off([OnCondition(vip, "Important customers.", available="vip"), AFTER_WORK(billing)])
    billing.register_hand_off(AFTER_WORK("TERMINATE"))

    def swarm(customer: str, balance: int, vip_customer: bool) -> Any:
        async def run() -> Any:
            context = {"customer": customer, "balance": balance, "vip": vip_customer}
            result, context_after, last = await a_initiate_swarm_chat(
                triage, f"I am {customer}", [triage, billing, vip], context_variables=context, silent=True
            )
            return summary_of(result), dict(context_after), last.name

        return run

    alone, together = await run_alone_and_together(
        swarm("Alice", 10, True), swarm("Bob", 20, False), swarm("Carol", 30, False)
    )

    assert together == alone
    (alice, alice_context, _), (bob, bob_context, _) = together[0], together[1]
    assert alice_context == {"customer": "Alice", "balance": 10, "vip": True, "looked_up": "Alice"}
    assert bob_context == {"customer": "Bob", "balance": 20, "vip": False, "looked_up": "Bob"}
    assert alice[0][-1]["content"] == "[Help Alice, who owes 10.] Alice owes 10"
    assert bob[0][-1]["content"] == "[Help Bob, who owes 20.] Bob owes 20"
    assert billing.system_message == "You are a helpful AI Assistant.", "the definition is unchanged"
    tools_offered: dict[str, set[tuple[str, ...]]] = {}
    for text, names in offered:
        tools_offered.setdefault(text, set()).add(names)
    assert tools_offered["I am Alice"] == {("lookup", "transfer_to_vip")}
    assert tools_offered["I am Bob"] == {("lookup",)}


async def test_one_group_chat_manager_in_two_chats_at_once():
    async def member_model(request: ModelRequest) -> ModelResponse:
        await pause()
        return costed(f"on {first_user_text(request)}", tokens=len(request.messages))

    agents = [
        ConversableAgent(name, llm_config=FunctionModel(member_model), human_input_mode="NEVER")
        for name in ("a", "b", "c")
    ]
    groupchat = GroupChat(agents, messages=[], max_round=4, speaker_selection_method="round_robin")
    manager = GroupChatManager(groupchat, llm_config=False)

    def chat(topic: str) -> Any:
        async def run() -> Any:
            return summary_of(await agents[0].a_initiate_chat(manager, topic, silent=True))

        return run

    alone, together = await run_alone_and_together(chat("rivers"), chat("mountains"))

    assert together == alone
    assert [m["content"] for m in together[1][0]] == [
        "mountains",
        "on mountains",
        "on mountains",
        "on on mountains",  # a's own first message is not a user message in its view
    ]
    assert [m["content"] for m in groupchat.messages] in ([m["content"] for m in r[0]] for r in together)


async def test_usage_of_each_chat_is_its_own_and_agents_sum_them():
    async def reply(request: ModelRequest) -> ModelResponse:
        await pause()
        return costed("ok", tokens=len(first_user_text(request)))

    assistant = ConversableAgent("assistant", llm_config=FunctionModel(reply), human_input_mode="NEVER")
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")

    short, long = await asyncio.gather(
        user.a_initiate_chat(assistant, "hi", max_turns=1, silent=True),
        user.a_initiate_chat(assistant, "hello there", max_turns=1, silent=True),
    )

    assert short.cost["usage_including_cached_inference"]["m"]["prompt_tokens"] == 2
    assert long.cost["usage_including_cached_inference"]["m"]["prompt_tokens"] == 11
    assert assistant.get_total_usage()["m"]["prompt_tokens"] == 13


def billing_swarm() -> tuple[SwarmAgent, SwarmAgent]:
    """Triage, which hands every ticket to billing, and billing, which answers "Paid." and ends the chat."""

    def reply(request: ModelRequest) -> Any:
        if request.messages[-1].get("role") == "tool":
            return "Done."
        return [tool_call("transfer_to_billing")]

    triage = SwarmAgent("triage", llm_config=FunctionModel(reply), human_input_mode="NEVER")
    billing = SwarmAgent(
        "billing", llm_config=FunctionModel(lambda request: "Paid."), human_input_mode="NEVER"
    )
    triage.register_hand_off(OnCondition(billing, "Billing."))
    billing.register_hand_off(AFTER_WORK("TERMINATE"))
    return triage, billing


async def test_agents_that_served_many_chats_keep_only_their_latest():
    """A set of agents serving chat after chat (a web service's) holds on to none of the earlier ones:
    the chats, their swarm managers and their messages are freed."""

    triage, billing = billing_swarm()
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    assistant = ConversableAgent("assistant", llm_config=FunctionModel(lambda request: "ok"))

    def chats_alive() -> int:
        gc.collect()
        return sum(1 for thing in gc.get_objects() if isinstance(thing, Chat))

    before = chats_alive()
    for number in range(20):
        result, _, _ = await a_initiate_swarm_chat(triage, f"ticket {number}", [triage, billing], silent=True)
        assert result.summary == "Paid."
        await user.a_initiate_chat(assistant, f"question {number}", max_turns=1, silent=True)

    # each agent keeps its latest chat (AG2's read APIs read it): 2 chats, whatever the number served
    assert chats_alive() - before <= 2


def test_a_swarm_over_shared_agents_is_freed_as_soon_as_nothing_holds_it():
    """A served chat forms no reference cycle with its swarm manager or the shared agents: once the
    agents move on to the next chat, the earlier one is freed at once, without waiting for the cycle
    collector (which, with a thousand chats at once, would otherwise walk them all again and again)."""

    triage, billing = billing_swarm()

    def alive() -> tuple[int, int]:  # objects not freed yet, collected or not
        things = gc.get_objects()
        return sum(isinstance(t, Chat) for t in things), sum(isinstance(t, GroupChatManager) for t in things)

    initiate_swarm_chat(triage, "ticket 1", [triage, billing], silent=True)
    gc.collect()
    gc.disable()
    try:
        before = alive()  # the first chat, which the agents hold as their latest, and its manager
        for number in range(2, 6):
            result, _, _ = initiate_swarm_chat(triage, f"ticket {number}", [triage, billing], silent=True)
            assert result.summary == "Paid."
        assert alive() == before
    finally:
        gc.enable()


async def test_inside_concurrent_swarms_an_agents_chat_messages_are_its_own_swarms():
    async def model(request: ModelRequest) -> Any:
        await pause()
        return "done" if request.messages[-1]["role"] == "tool" else [tool_call("peek")]

    agent = SwarmAgent("agent", llm_config=FunctionModel(model))
    seen: dict[str, list[list[Any]]] = {}

    @agent.register_for_execution()
    @agent.register_for_llm(description="Look at the conversation.")
    def peek() -> str:
        seen[agent.get_context("customer")] = [
            [message.get("content") for message in messages] for messages in agent.chat_messages.values()
        ]
        return "ok"

    agent.register_hand_off(AFTER_WORK(AfterWorkOption.TERMINATE))

    await asyncio.gather(
        *(
            a_initiate_swarm_chat(
                agent, f"I am {name}", [agent], context_variables={"customer": name}, silent=True
            )
            for name in ("Alice", "Bob", "Carol")
        )
    )

    assert seen == {name: [[f"I am {name}", None]] for name in ("Alice", "Bob", "Carol")}


def test_a_selection_function_reads_its_own_chats_messages_while_another_chat_of_the_group_starts():
    writer, critic = (
        ConversableAgent(
            name, llm_config=False, human_input_mode="NEVER", default_auto_reply=f"{name} speaks"
        )
        for name in ("writer", "critic")
    )
    second_started = threading.Event()
    seen: dict[str, list[list[str]]] = {"first": [], "second": []}

    def next_speaker(last_speaker: Any, groupchat: GroupChat) -> Any:
        chat = threading.current_thread().name
        if chat == "second":
            second_started.set()
        else:
            second_started.wait(5)  # the second chat has started meanwhile
        seen[chat].append([message["content"] for message in groupchat.messages])
        if len(groupchat.messages) >= 3:
            return None
        return critic if last_speaker is writer else writer

    groupchat = GroupChat([writer, critic], messages=[], max_round=12, speaker_selection_method=next_speaker)
    manager = GroupChatManager(groupchat, llm_config=False)
    results: dict[str, Any] = {}

    def run(chat: str) -> None:
        results[chat] = writer.initiate_chat(manager, f"draft of the {chat}", silent=True)

    first = threading.Thread(target=run, args=("first",), name="first")
    first.start()
    second = threading.Thread(target=run, args=("second",), name="second")
    second.start()
    first.join(10)
    second.join(10)

    for chat in ("first", "second"):
        assert seen[chat][0] == [f"draft of the {chat}"]
        assert [m["content"] for m in results[chat].chat_history] == [
            f"draft of the {chat}",
            "critic speaks",
            "writer speaks",
        ]
