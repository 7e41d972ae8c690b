"""``stream=True``: the OpenAI and Anthropic clients stream through their SDKs, pass each piece of text to
the token sink, and return what the same request without streaming returns."""

from __future__ import annotations

import json

import pytest
from fake_servers import (
    FakeServer,
    anthropic_message,
    anthropic_stream,
    completion,
    completion_chunks,
    completion_stream,
    json_completion,
    sse,
)

from parley import ConversableAgent
from parley.models import AnthropicClient, ConfigListClient, ModelResponseError, OpenAIClient
from parley.models.streaming import StreamedText, token_sink
from parley.tools import Tool

HELLO = [{"role": "user", "content": "Where is order 7?"}]


def lookup_order(order_id: int) -> str:
    """Find an order by its number."""
    return "shipped"


TOOLS = [Tool(lookup_order).schema]


@pytest.fixture
def server():
    with FakeServer() as running:
        yield running


@pytest.fixture
def pieces():
    """The sink of the test: collects what it is given."""
    received: list[StreamedText] = []
    token = token_sink.set(received.append)
    yield received
    token_sink.reset(token)


def openai(server: FakeServer, **kwargs) -> OpenAIClient:
    return OpenAIClient("gpt-4o-mini", base_url=server.url, api_key="sk-x", max_retries=0, **kwargs)


def anthropic(server: FakeServer) -> AnthropicClient:
    return AnthropicClient("claude-haiku-4-5", base_url=server.root, api_key="a", max_retries=0)


def without_ids(message: dict) -> dict:
    calls = [{**call, "id": None} for call in message.get("tool_calls") or ()]
    return {**message, "tool_calls": calls} if calls else message


# OpenAI ----------------------------------------------------------------------------------------------


def test_text_streams_to_the_sink_and_the_response_is_the_unstreamed_one(server, pieces):
    usage = {"model": "gpt-4o-mini-2024-07-18", "prompt_tokens": 100, "completion_tokens": 20}
    server.script(
        completion("Order 7 shipped.", **usage), completion_stream(["Order 7", " shipped", "."], **usage)
    )

    plain = openai(server).create(HELLO)
    streamed = openai(server).create(HELLO, stream=True)

    assert streamed == plain
    assert streamed.cost > 0
    assert pieces == [StreamedText("Order 7"), StreamedText(" shipped"), StreamedText(".")]
    body = server.requests[1].body
    assert (body["stream"], body["stream_options"]) == (True, {"include_usage": True})
    assert "stream" not in server.requests[0].body


def test_tool_calls_stream_their_arguments(server, pieces):
    server.script(
        completion("Let me look.", tool_calls=[("lookup_order", {"order_id": 7})]),
        completion_stream(["Let me look."], tool_calls=[("lookup_order", ['{"order', '_id": 7}'])]),
    )

    plain = openai(server).create(HELLO, TOOLS)
    streamed = openai(server).create(HELLO, TOOLS, stream=True)

    assert without_ids(streamed.message) == without_ids(plain.message)
    assert streamed.message["tool_calls"][0]["id"].startswith("call_fake_")
    assert streamed.usage == plain.usage
    assert pieces == [
        StreamedText("Let me look."),
        StreamedText('{"order', "lookup_order"),
        StreamedText('_id": 7}', "lookup_order"),
    ]


def test_several_tool_calls_are_told_apart_by_their_index(server):
    server.script(
        completion_stream(
            None, tool_calls=[("lookup_order", ['{"order_id":', " 1}"]), ("lookup_order", ["{}"])]
        )
    )

    message = openai(server).create(HELLO, TOOLS, stream=True).message

    assert [call["function"]["arguments"] for call in message["tool_calls"]] == ['{"order_id": 1}', "{}"]
    assert message["content"] is None


def test_streaming_without_a_sink_gives_the_same_response(server):
    server.script(completion_stream(["Hi", "!"]))

    assert openai(server).create(HELLO, stream=True).message == {"role": "assistant", "content": "Hi!"}


def test_stream_options_of_your_own_are_kept(server):
    server.script(completion_stream(["Hi"], prompt_tokens=None))

    with pytest.warns(UserWarning, match="reported no usable token usage"):
        response = openai(server).create(HELLO, stream=True, stream_options={"include_usage": False})

    assert server.requests[0].body["stream_options"] == {"include_usage": False}
    # no usage came back: parley counts the most the call can have used, so that budgets hold
    assert response.usage.prompt_tokens >= len(HELLO[0]["content"])
    assert response.usage.completion_tokens >= len("Hi")


def test_a_server_that_answers_a_stream_request_in_one_piece(server, pieces):
    server.script(completion("All at once."))

    response = openai(server).create(HELLO, stream=True)

    assert response.message["content"] == "All at once."
    assert pieces == [StreamedText("All at once.")]


def test_a_stream_cut_off_in_a_tool_call_is_the_same_fault_as_without_streaming(server):
    server.script(
        completion_stream(None, tool_calls=[("lookup_order", ['{"order_'])], finish_reason="length")
    )

    with pytest.raises(ModelResponseError, match="in the middle of a call to 'lookup_order'"):
        openai(server).create(HELLO, TOOLS, stream=True)


def test_a_stream_event_that_is_not_json(server):
    server.script(sse(completion_chunks(["ok"])[0], "{not json"))

    with pytest.raises(ModelResponseError, match="sent a stream event that is not JSON"):
        openai(server).create(HELLO, stream=True)


def test_an_empty_stream_is_no_choices(server):
    server.script(sse())

    with pytest.raises(ModelResponseError, match="returned no choices"):
        openai(server).create(HELLO, stream=True)


def test_the_json_tool_call_mode_does_not_stream_its_json(server, pieces):
    server.script(json_completion({"name": "lookup_order", "arguments": {"order_id": 7}}))

    response = openai(server, tool_call_mode="json_schema").create(HELLO, TOOLS, stream=True)

    assert "stream" not in server.requests[0].body
    assert response.message["tool_calls"][0]["function"]["name"] == "lookup_order"
    assert pieces == []


async def test_async_streaming(server, pieces):
    server.script(completion_stream(["As", "ync"]))

    response = await openai(server).a_create(HELLO, stream=True)

    assert response.message["content"] == "Async"
    assert [piece.text for piece in pieces] == ["As", "ync"]


def test_stream_true_in_llm_config_streams_a_chat(server, pieces):
    server.script(completion_stream(["Par", "is."]))
    assistant = ConversableAgent(
        "assistant",
        llm_config={
            "config_list": [{"model": "gpt-4o-mini", "base_url": server.url, "api_key": "x"}],
            "stream": True,
        },
        human_input_mode="NEVER",
    )
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")

    result = user.initiate_chat(assistant, "Capital of France?", max_turns=1, silent=True)

    assert result.summary == "Paris."
    assert "".join(piece.text for piece in pieces) == "Paris."
    assert result.cost["usage_including_cached_inference"]["fake-model"]["total_tokens"] == 15


@pytest.mark.parametrize("where", ["beside the config list", "in the config"])
def test_a_listener_that_shows_streams_gets_them_wherever_llm_config_sets_stream(server, where):
    server.script(completion_stream(["Par", "is."]))
    config = {"model": "gpt-4o-mini", "base_url": server.url, "api_key": "x"}
    llm_config: dict = {"config_list": [config]}
    (llm_config if where == "beside the config list" else config)["stream"] = True
    shown: list[str] = []

    class Shows:
        def __call__(self, event):
            pass

        def stream_to(self, agent):
            return lambda piece: shown.append(piece.text)

    assistant = ConversableAgent("assistant", llm_config=llm_config, human_input_mode="NEVER")
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")

    result = user.initiate_chat(assistant, "Capital?", max_turns=1, silent=True, listeners=[Shows()])

    assert result.summary == "Paris."
    assert "".join(shown) == "Paris."


def test_a_streamed_request_answered_from_the_cache_gives_the_sink_the_whole_reply(server, pieces, tmp_path):
    server.script(completion_stream(["Par", "is."]))
    client = ConfigListClient(
        {
            "config_list": [{"model": "gpt-4o-mini", "base_url": server.url, "api_key": "x"}],
            "stream": True,
            "cache_seed": 3,
            "cache_path_root": str(tmp_path),
        }
    )

    first = client.create(HELLO)
    second = client.create(HELLO)

    assert (first.message, second.message, second.cached) == (second.message, first.message, True)
    assert [piece.text for piece in pieces] == ["Par", "is.", "Paris."]
    assert len(server.requests) == 1


# Anthropic -------------------------------------------------------------------------------------------


def test_anthropic_text_and_tool_use_stream_and_the_response_is_the_unstreamed_one(server, pieces):
    usage = {"model": "claude-haiku-4-5-20251001", "input_tokens": 1000, "output_tokens": 100}
    server.script(
        anthropic_message("Let me look.", tool_uses=[("lookup_order", {"order_id": 7})], **usage),
        anthropic_stream(
            ["Let me", " look."], tool_uses=[("lookup_order", ['{"order_id"', ": 7}"])], **usage
        ),
    )

    plain = anthropic(server).create(HELLO, TOOLS)
    streamed = anthropic(server).create(HELLO, TOOLS, stream=True)

    assert without_ids(streamed.message) == without_ids(plain.message)
    assert (streamed.usage, streamed.cost, streamed.model) == (plain.usage, plain.cost, plain.model)
    assert server.requests[1].body["stream"] is True
    assert "stream_options" not in server.requests[1].body
    assert pieces == [
        StreamedText("Let me"),
        StreamedText(" look."),
        StreamedText('{"order_id"', "lookup_order"),
        StreamedText(": 7}", "lookup_order"),
    ]


def test_anthropic_stream_cut_off_in_a_tool_use(server):
    server.script(
        anthropic_stream(None, tool_uses=[("lookup_order", ['{"order_'])], stop_reason="max_tokens")
    )

    with pytest.raises(
        ModelResponseError, match=r"whose input is not a JSON object \(it stopped at max_tokens"
    ):
        anthropic(server).create(HELLO, TOOLS, stream=True)


async def test_anthropic_async_streaming(server, pieces):
    server.script(anthropic_stream(["Hel", "lo"]))

    response = await anthropic(server).a_create(HELLO, stream=True)

    assert response.message == {"role": "assistant", "content": "Hello"}
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (12, 7)
    assert [piece.text for piece in pieces] == ["Hel", "lo"]


def test_the_fake_stream_is_what_it_claims():
    events = [json.loads(json.dumps(event)) for event in completion_chunks(["a"], prompt_tokens=3)]

    assert events[-1]["usage"]["prompt_tokens"] == 3
    assert events[-1]["choices"] == []
