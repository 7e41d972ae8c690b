"""End to end: agents whose model is an OpenAI-compatible server, calling tools another agent runs."""

from __future__ import annotations

from typing import Annotated

import pytest
from fake_servers import FakeServer, Recorded, completion, json_completion

from conftest import contents
from parley import ConversableAgent
from parley.models import ModelError


@pytest.fixture
def server():
    with FakeServer() as running:
        yield running


def agents(url: str, **config):
    assistant = ConversableAgent(
        "assistant",
        system_message="You help with orders. Reply TERMINATE when done.",
        llm_config={
            "config_list": [{"model": "gpt-4o-mini", "base_url": url, "api_key": "x", **config}],
            "cache_seed": None,
        },
        human_input_mode="NEVER",
    )
    user = ConversableAgent(
        "user",
        llm_config=False,
        human_input_mode="NEVER",
        is_termination_msg=lambda m: m.get("content") == "TERMINATE",
    )

    @user.register_for_execution()
    @assistant.register_for_llm(description="Find an order by its number.")
    def lookup_order(order_id: Annotated[int, "The order number"]) -> str:
        return f"order {order_id}: shipped on Monday"

    return assistant, user


def test_a_tool_call_is_executed_by_the_other_agent_and_the_result_goes_back_to_the_model(server):
    server.script(
        completion(None, tool_calls=[("lookup_order", {"order_id": 7})]),
        completion("Order 7 shipped on Monday."),
        completion("TERMINATE"),
    )
    assistant, user = agents(server.url)

    result = user.initiate_chat(assistant, "Where is order 7?", silent=True)

    assert contents(result) == [
        "Where is order 7?",
        None,
        "order 7: shipped on Monday",
        "Order 7 shipped on Monday.",
        "",
        "TERMINATE",
    ]
    assert result.chat_history[1]["tool_calls"][0]["function"] == {
        "name": "lookup_order",
        "arguments": '{"order_id": 7}',
    }
    first, second = server.requests[0].body, server.requests[1].body
    assert first["messages"][0] == {
        "role": "system",
        "content": "You help with orders. Reply TERMINATE when done.",
    }
    assert first["messages"][1] == {"role": "user", "content": "Where is order 7?", "name": "user"}
    assert [tool["function"]["name"] for tool in first["tools"]] == ["lookup_order"]
    assert first["tools"][0]["function"]["description"] == "Find an order by its number."
    call = second["messages"][2]["tool_calls"][0]
    assert second["messages"][3] == {
        "role": "tool",
        "tool_call_id": call["id"],
        "content": "order 7: shipped on Monday",
    }
    assert result.cost["usage_including_cached_inference"]["fake-model"]["prompt_tokens"] == 10 * len(
        server.requests
    )


def test_the_json_schema_mode_routes_through_the_same_tools(server):
    server.script(
        json_completion({"name": "lookup_order", "arguments": {"order_id": 7}}),
        json_completion({"name": "reply_to_user", "arguments": {"text": "TERMINATE"}}),
    )
    assistant, user = agents(server.url, tool_call_mode="json_schema")

    result = user.initiate_chat(assistant, "Where is order 7?", silent=True)

    assert contents(result)[:3] == ["Where is order 7?", None, "order 7: shipped on Monday"]
    assert contents(result)[-1] == "TERMINATE"
    first, second = server.requests[0].body, server.requests[1].body
    assert "tools" not in first
    assert (
        "- lookup_order(order_id: integer): Find an order by its number.\n    order_id: The order number"
        in first["messages"][0]["content"]
    )
    assert first["response_format"]["json_schema"]["schema"]["anyOf"][0]["properties"]["name"] == {
        "const": "lookup_order"
    }
    assert second["messages"][2] == {
        "role": "assistant",
        "content": '{"name": "lookup_order", "arguments": {"order_id": 7}}',
        "name": "assistant",
    }
    assert second["messages"][3] == {
        "role": "user",
        "content": "Result of lookup_order: order 7: shipped on Monday",
    }


def test_arguments_that_are_not_json_come_back_as_an_error_the_model_can_correct(server):
    def corrected(request: Recorded):
        tool_reply = request.messages[-1]
        assert tool_reply["role"] == "tool"
        assert tool_reply["content"].startswith(
            "Error: invalid arguments for lookup_order: the arguments are not valid JSON"
        )
        return completion(None, tool_calls=[("lookup_order", {"order_id": 7})])

    server.script(
        completion(None, tool_calls=[("lookup_order", "{order_id: 7")]), corrected, completion("TERMINATE")
    )
    assistant, user = agents(server.url)

    result = user.initiate_chat(assistant, "Where is order 7?", silent=True)

    assert "order 7: shipped on Monday" in contents(result)
    assert len(server.requests) == 3


def test_an_unknown_tool_comes_back_as_an_error_naming_the_tools(server):
    server.script(completion(None, tool_calls=[("cancel_order", {"order_id": 7})]), completion("TERMINATE"))
    assistant, user = agents(server.url)

    user.initiate_chat(assistant, "Cancel order 7", silent=True)

    tool_reply = server.requests[1].body["messages"][-1]
    assert tool_reply["content"] == "Error: Function cancel_order not found. Available tools: lookup_order."


def test_a_reply_that_breaks_the_json_mode_stops_the_chat_with_a_model_error(server):
    server.script(completion("Sure! Let me look that up."))
    assistant, user = agents(server.url, tool_call_mode="json_schema")

    with pytest.raises(ModelError, match="not valid JSON"):
        user.initiate_chat(assistant, "Where is order 7?", silent=True)


async def test_an_async_chat_with_a_tool_call(server):
    server.script(completion(None, tool_calls=[("lookup_order", {"order_id": 9})]), completion("TERMINATE"))
    assistant, user = agents(server.url)

    result = await user.a_initiate_chat(assistant, "Where is order 9?", silent=True)

    assert "order 9: shipped on Monday" in contents(result)
    assert server.requests[1].body["messages"][-1]["content"] == "order 9: shipped on Monday"
