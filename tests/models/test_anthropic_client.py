"""The Anthropic client, through the real ``anthropic`` SDK, against a fake messages API on 127.0.0.1."""

from __future__ import annotations

import anthropic
import pytest
from fake_servers import FakeServer, Reply, anthropic_message, rate_limited, server_error

from parley.models import AnthropicClient, ModelError
from parley.models.anthropic_client import to_anthropic_messages, to_anthropic_tool_choice
from parley.tools import Tool


@pytest.fixture
def server():
    with FakeServer() as running:
        yield running


def lookup_order(order_id: int) -> str:
    """Find an order by its number."""
    return f"order {order_id}: shipped"


TOOLS = [Tool(lookup_order).schema]
SYSTEM = {"role": "system", "content": "You are a support agent."}
HELLO = {"role": "user", "content": "Where is order 7?", "name": "customer"}
CALL = {
    "id": "toolu_1",
    "type": "function",
    "function": {"name": "lookup_order", "arguments": '{"order_id": 7}'},
}


def client(server: FakeServer, **kwargs) -> AnthropicClient:
    kwargs.setdefault("api_key", "ant-test")
    return AnthropicClient(kwargs.pop("model", "claude-haiku-4-5"), base_url=server.root, **kwargs)


def sent_key(request) -> str | None:
    """The API key a request carried (``x-api-key``, or a bearer token in newer SDKs)."""
    bearer = request.headers.get("authorization", "")
    return request.headers.get("x-api-key") or bearer.removeprefix("Bearer ") or None


def test_a_plain_reply_with_usage_cost_and_model(server):
    server.script(
        anthropic_message(
            "It shipped.", model="claude-haiku-4-5-20251001", input_tokens=1000, output_tokens=100
        )
    )

    response = client(server).create([SYSTEM, HELLO], temperature=0.3, seed=1, stop="END")

    assert response.message == {"role": "assistant", "content": "It shipped."}
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (1000, 100)
    assert response.model == "claude-haiku-4-5-20251001"
    assert response.cost == pytest.approx((1000 * 0.001 + 100 * 0.005) / 1000)
    (request,) = server.requests
    assert request.path == "/v1/messages"
    assert sent_key(request) == "ant-test"
    assert request.body["system"] == "You are a support agent."
    assert request.body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "customer: Where is order 7?"}]}
    ]
    assert request.body["max_tokens"] == 4096
    assert request.body["temperature"] == 0.3
    assert request.body["stop_sequences"] == ["END"]
    assert "seed" not in request.body


def test_temperature_and_top_p_are_not_sent_together(server):
    """Anthropic's latest models refuse a request with both (400); temperature is kept, with a warning."""
    server.script(anthropic_message("ok"), anthropic_message("ok"))

    with pytest.warns(UserWarning, match="take temperature or top_p, not both"):
        client(server).create([HELLO], temperature=0.2, top_p=0.9)
    client(server).create([HELLO], top_p=0.9)

    both, top_p_only = (request.body for request in server.requests)
    assert both["temperature"] == 0.2 and "top_p" not in both
    assert top_p_only["top_p"] == 0.9


def test_the_api_key_comes_from_the_environment(server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ant-from-env")
    server.script(anthropic_message("ok"))

    client(server, api_key=None).create([HELLO], max_tokens=100)

    assert sent_key(server.requests[0]) == "ant-from-env"
    assert server.requests[0].body["max_tokens"] == 100


def test_tool_use_comes_back_as_openai_tool_calls(server):
    server.script(anthropic_message("Let me look.", [("lookup_order", {"order_id": 7})]))

    response = client(server).create(
        [SYSTEM, HELLO], TOOLS, tool_choice="required", parallel_tool_calls=False
    )

    body = server.requests[0].body
    assert body["tools"] == [
        {
            "name": "lookup_order",
            "description": "Find an order by its number.",
            "input_schema": TOOLS[0]["function"]["parameters"],
        }
    ]
    assert body["tool_choice"] == {"type": "any", "disable_parallel_tool_use": True}
    (call,) = response.message["tool_calls"]
    assert response.message["content"] == "Let me look."
    assert call["id"].startswith("toolu_")
    assert call["function"] == {"name": "lookup_order", "arguments": '{"order_id": 7}'}


def test_tool_calls_and_results_in_history_become_tool_use_and_tool_result_blocks(server):
    server.script(anthropic_message("Order 7 has shipped."))
    history = [
        SYSTEM,
        HELLO,
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "toolu_1", "content": "order 7: shipped"},
    ]

    client(server).create(history, TOOLS)

    assert server.requests[0].body["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "lookup_order", "input": {"order_id": 7}}
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "order 7: shipped"}],
        },
    ]


def test_without_tools_earlier_tool_calls_are_written_as_text():
    _, turns = to_anthropic_messages(
        [
            HELLO,
            {"role": "assistant", "content": None, "tool_calls": [CALL]},
            {"role": "tool", "tool_call_id": "toolu_1", "content": "shipped"},
        ],
        with_tools=False,
    )

    assert turns[1] == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": 'Tool call: {"name": "lookup_order", "arguments": {"order_id": 7}}'}
        ],
    }
    assert turns[2] == {"role": "user", "content": [{"type": "text", "text": "Tool result: shipped"}]}


def test_turns_are_merged_and_start_and_end_with_the_user():
    system, turns = to_anthropic_messages(
        [
            SYSTEM,
            {"role": "system", "content": "Be brief."},
            {"role": "assistant", "content": "I opened the chat."},
            {"role": "user", "content": "one"},
            {"role": "user", "content": "two"},
            {"role": "system", "content": "late instruction"},
            {"role": "assistant", "content": "done"},
        ],
        with_tools=False,
    )

    assert system == "You are a support agent.\n\nBe brief."
    assert [turn["role"] for turn in turns] == ["user", "assistant", "user", "assistant", "user"]
    assert turns[0]["content"] == [{"type": "text", "text": "Please continue."}]
    assert [block["text"] for block in turns[2]["content"]] == ["one", "two", "late instruction"]


def test_images_become_image_blocks():
    _, turns = to_anthropic_messages(
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "what is this?"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                    {"type": "image_url", "image_url": {"url": "https://example.invalid/cat.png"}},
                ],
            }
        ],
        with_tools=False,
    )

    assert turns[0]["content"][1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"},
    }
    assert turns[0]["content"][2]["source"] == {"type": "url", "url": "https://example.invalid/cat.png"}


@pytest.mark.parametrize(
    ("choice", "parallel", "expected"),
    [
        (None, None, None),
        ("auto", None, {"type": "auto"}),
        ("none", None, {"type": "none"}),
        (
            {"type": "function", "function": {"name": "lookup_order"}},
            None,
            {"type": "tool", "name": "lookup_order"},
        ),
        (None, False, {"type": "auto", "disable_parallel_tool_use": True}),
    ],
)
def test_tool_choice_mapping(choice, parallel, expected):
    assert to_anthropic_tool_choice(choice, parallel) == expected


def test_an_empty_reply_is_a_model_error(server):
    server.script(anthropic_message(None, stop_reason="max_tokens"))

    with pytest.raises(
        ModelError, match=r"'claude-haiku-4-5' at http://127\.0\.0\.1:\d+ returned an empty reply.*max_tokens"
    ):
        client(server).create([HELLO])


def test_response_format_is_refused():
    with pytest.raises(ModelError, match="response_format is not supported"):
        AnthropicClient("claude-haiku-4-5", api_key="x")._request(
            [HELLO], None, {"response_format": {"type": "json_object"}}
        )


def test_json_tool_mode_is_refused_for_anthropic():
    with pytest.raises(ValueError, match="call tools natively"):
        AnthropicClient.from_config({"model": "claude-haiku-4-5", "tool_call_mode": "json_schema"}, {})


def test_rate_limits_and_overloads_are_retried(server):
    server.script(rate_limited(), server_error(529), anthropic_message("finally"))

    response = client(server, max_retries=2).create([HELLO])

    assert response.message["content"] == "finally"
    assert len(server.requests) == 3


def test_a_timeout_without_retries_fails(server):
    server.script(Reply(anthropic_message("slow"), delay=1.0))

    with pytest.raises(anthropic.APITimeoutError):
        client(server, timeout=0.2, max_retries=0).create([HELLO])


async def test_async_create(server):
    server.script(anthropic_message("async hello"))

    response = await client(server).a_create([SYSTEM, HELLO])

    assert response.message["content"] == "async hello"
