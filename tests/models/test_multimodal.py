"""Contents that are lists of parts (text and images): accepted, sent to each provider in its own form,
and taken back from models; speaker names reach Claude."""

from __future__ import annotations

import pytest
from fake_servers import FakeServer, anthropic_message, completion

from parley import ConversableAgent, GroupChat, GroupChatManager, ScriptedModel
from parley.models import ConfigListClient
from parley.models.anthropic_client import to_anthropic_messages

PICTURE = "data:image/png;base64,iVBORw0KGgo="
QUESTION = [
    {"type": "text", "text": "What is in this picture?"},
    {"type": "image_url", "image_url": {"url": PICTURE, "detail": "low"}},
]


@pytest.fixture
def server():
    with FakeServer() as running:
        yield running


@pytest.fixture
def backup():
    with FakeServer() as running:
        yield running


def served_agent(url: str, **config) -> ConversableAgent:
    return ConversableAgent(
        "assistant",
        llm_config={"config_list": [{"model": "gpt-4o-mini", "base_url": url, "api_key": "x", **config}]},
        human_input_mode="NEVER",
    )


def user() -> ConversableAgent:
    return ConversableAgent("user", llm_config=False, human_input_mode="NEVER", default_auto_reply="thanks")


def test_a_chat_carries_parts_both_ways():
    chart = [
        {"type": "text", "text": "Here is the chart."},
        {"type": "image_url", "image_url": {"url": "https://example.invalid/chart.png"}},
    ]
    model = ScriptedModel([{"content": chart}, "You're welcome."])
    assistant = ConversableAgent("assistant", llm_config=model, human_input_mode="NEVER")

    result = user().initiate_chat(assistant, {"content": QUESTION}, max_turns=2, silent=True)

    assert [m["content"] for m in result.chat_history] == [QUESTION, chart, "thanks", "You're welcome."]
    assert model.requests[0].messages[-1] == {"content": QUESTION, "role": "user", "name": "user"}
    assert model.requests[1].messages[2] == {"content": chart, "role": "assistant", "name": "assistant"}


def test_openai_gets_the_parts_as_they_are(server):
    server.script(completion("A cat."))

    result = user().initiate_chat(served_agent(server.url), {"content": QUESTION}, max_turns=1, silent=True)

    assert server.requests[0].body["messages"][-1] == {"role": "user", "content": QUESTION, "name": "user"}
    assert result.summary == "A cat."


def test_a_reply_of_text_parts_is_text(server):
    body = completion(None)
    body["choices"][0]["message"]["content"] = [
        {"type": "text", "text": "A "},
        {"type": "text", "text": "cat."},
    ]
    server.script(body)

    result = user().initiate_chat(served_agent(server.url), "What is it?", max_turns=1, silent=True)

    assert result.chat_history[-1]["content"] == "A cat."


def test_a_reply_with_an_image_part_reaches_the_chat(server):
    parts = [{"type": "text", "text": "Drawn:"}, {"type": "image_url", "image_url": {"url": PICTURE}}]
    body = completion(None)
    body["choices"][0]["message"]["content"] = parts
    server.script(body)

    result = user().initiate_chat(served_agent(server.url), "Draw a cat", max_turns=1, silent=True)

    assert result.chat_history[-1]["content"] == parts


def test_a_reply_with_malformed_parts_falls_back_to_the_next_config(server, backup):
    body = completion(None)
    body["choices"][0]["message"]["content"] = [{"type": "video", "frames": 3}]
    server.script(body)
    backup.script(completion("from the backup"))
    client = ConfigListClient(
        {
            "config_list": [
                {"model": "first", "base_url": server.url, "api_key": "x"},
                {"model": "second", "base_url": backup.url, "api_key": "x"},
            ]
        }
    )

    assert client.create([{"role": "user", "content": "hi"}]).message["content"] == "from the backup"


def test_anthropic_gets_image_blocks_and_the_speaker_name(server):
    server.script(anthropic_message("A cat."))
    assistant = ConversableAgent(
        "assistant",
        llm_config={
            "config_list": [
                {
                    "model": "claude-haiku-4-5",
                    "api_type": "anthropic",
                    "base_url": server.root,
                    "api_key": "a",
                }
            ]
        },
        human_input_mode="NEVER",
    )

    result = user().initiate_chat(assistant, {"content": QUESTION}, max_turns=1, silent=True)

    assert server.requests[0].body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "user: What is in this picture?"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
                },
            ],
        }
    ]
    assert result.summary == "A cat."


def test_claude_sees_who_said_what_in_a_group_chat(server):
    server.script(anthropic_message("Alice wants tea, Bob wants coffee."))
    claude = ConversableAgent(
        "claude",
        llm_config={
            "config_list": [
                {
                    "model": "claude-haiku-4-5",
                    "api_type": "anthropic",
                    "base_url": server.root,
                    "api_key": "a",
                }
            ]
        },
        human_input_mode="NEVER",
    )
    alice = ConversableAgent("alice", llm_config=False, human_input_mode="NEVER", default_auto_reply="unused")
    bob = ConversableAgent(
        "bob", llm_config=False, human_input_mode="NEVER", default_auto_reply="Coffee for me."
    )
    group = GroupChat([alice, bob, claude], messages=[], max_round=3, speaker_selection_method="round_robin")
    manager = GroupChatManager(group, llm_config=False)

    alice.initiate_chat(manager, "I'd like tea.", silent=True)

    assert server.requests[0].body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "alice: I'd like tea."},
                {"type": "text", "text": "bob: Coffee for me."},
            ],
        }
    ]


def test_an_image_without_text_gets_the_name_in_a_text_block_of_its_own():
    _, turns = to_anthropic_messages(
        [
            {
                "role": "user",
                "name": "alice",
                "content": [{"type": "image_url", "image_url": {"url": PICTURE}}],
            },
            {"role": "assistant", "name": "claude", "content": "A cat."},
        ],
        with_tools=False,
    )

    assert turns[0]["content"][0] == {"type": "text", "text": "alice:"}
    assert turns[0]["content"][1]["type"] == "image"
    assert turns[1] == {"role": "assistant", "content": [{"type": "text", "text": "A cat."}]}
