"""Answers that are not a usable reply: each a clear ModelError, never a key in sight, fallbacks tried."""

from __future__ import annotations

import json

import anthropic
import openai
import pytest
from fake_servers import (
    FakeServer,
    Reply,
    anthropic_message,
    completion,
    completion_chunks,
    raw,
    sse,
)

from parley import ConversableAgent
from parley.models import (
    AllConfigsFailedError,
    AnthropicClient,
    ConfigListClient,
    ModelError,
    OpenAIClient,
    sdk,
)
from parley.models.faults import REDACTED, ModelResponseError, redact

KEY = "sk-test-0123456789abcdef"
HELLO = [{"role": "user", "content": "Where is order 7?"}]
HTML = "<html><head><title>502 Bad Gateway</title></head><body>upstream failed</body></html>"


@pytest.fixture
def server():
    with FakeServer() as running:
        yield running


@pytest.fixture
def backup():
    with FakeServer() as running:
        yield running


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch):
    monkeypatch.setattr(sdk, "UNUSABLE_RETRY_DELAY", 0.0)


def client(server: FakeServer, **kwargs) -> OpenAIClient:
    kwargs.setdefault("api_key", KEY)
    kwargs.setdefault("max_retries", 0)
    return OpenAIClient("gpt-4o-mini", base_url=server.url, **kwargs)


def fault_of(server: FakeServer, **kwargs) -> ModelResponseError:
    with pytest.raises(ModelResponseError) as caught:
        client(server, **kwargs).create(HELLO)
    return caught.value


# bodies that are not a chat completion --------------------------------------------------------------


def test_an_html_page_with_status_200_names_model_endpoint_status_and_body(server):
    server.script(raw(HTML))

    error = fault_of(server)

    message = str(error)
    assert message.startswith(f"model 'gpt-4o-mini' at {server.url} answered with a body that is not JSON")
    assert "(text/html)" in message
    assert "(HTTP 200): '<html><head><title>502 Bad Gateway</title>" in message
    assert (error.model, error.endpoint, error.status, error.retryable) == (
        "gpt-4o-mini",
        server.url,
        200,
        True,
    )
    assert isinstance(error, ModelError)


def test_a_body_that_is_not_json_is_retried_and_the_retry_answers(server):
    server.script(
        raw(HTML), raw("not json either", content_type="application/json"), completion("It shipped.")
    )

    response = client(server, max_retries=2).create(HELLO)

    assert response.message["content"] == "It shipped."
    assert len(server.requests) == 3


def test_retries_of_a_bad_body_run_out(server):
    server.script(raw(HTML), raw(HTML), completion("too late"))

    with pytest.raises(ModelResponseError, match="not JSON"):
        client(server, max_retries=1).create(HELLO)
    assert len(server.requests) == 2


def test_json_that_is_not_a_completion_quotes_it(server):
    server.script({"error": {"message": "the upstream model is overloaded"}})

    error = fault_of(server)

    assert "answered with JSON that is not a reply (no 'choices') (HTTP 200)" in str(error)
    assert "the upstream model is overloaded" in str(error)


def test_an_event_stream_nobody_asked_for_is_not_retried(server):
    server.script(sse(*completion_chunks(["Hel", "lo"])), completion("never asked"))

    error = fault_of(server, max_retries=2)

    assert "answered with an event stream, but no stream was asked for (HTTP 200): 'data: {" in str(error)
    assert not error.retryable
    assert len(server.requests) == 1


def test_an_empty_choices_list(server):
    body = completion("x")
    body["choices"] = []
    server.script(body)

    error = fault_of(server, max_retries=2)

    assert f"model 'gpt-4o-mini' at {server.url} returned no choices (HTTP 200): " in str(error)
    assert '"choices": []' in str(error)
    assert len(server.requests) == 1


def test_content_that_is_neither_text_nor_content_parts(server):
    body = completion(None)
    body["choices"][0]["message"]["content"] = [1, 2, 3]
    server.script(body)

    error = fault_of(server)

    assert "returned content that is neither text nor a list of content parts (HTTP 200): '[1, 2, 3]'" in str(
        error
    )


def test_a_reply_cut_off_in_the_middle_of_a_tool_call(server):
    server.script(
        completion(None, tool_calls=[("lookup_order", '{"order_id": 7, "no')], finish_reason="length")
    )

    error = fault_of(server)

    assert (
        "stopped at its token limit (finish_reason 'length') in the middle of a call to 'lookup_order'; "
        'raise max_tokens (HTTP 200): \'{"order_id": 7, "no\''
    ) in str(error)


def test_a_reply_cut_off_after_a_whole_tool_call_is_a_reply(server):
    server.script(completion(None, tool_calls=[("lookup_order", {"order_id": 7})], finish_reason="length"))

    response = client(server).create(HELLO)

    assert response.message["tool_calls"][0]["function"]["arguments"] == '{"order_id": 7}'


async def test_async_faults_are_the_same(server):
    server.script(raw(HTML), completion("async after the page"))

    with pytest.raises(ModelResponseError, match="not JSON"):
        await client(server).a_create(HELLO)
    assert (await client(server).a_create(HELLO)).message["content"] == "async after the page"


# secrets --------------------------------------------------------------------------------------------


def test_a_bad_body_quoting_the_key_is_redacted(server):
    server.script(raw(f"<html>proxy refused the key {KEY} (Bearer {KEY})</html>"))

    error = fault_of(server)

    assert KEY not in str(error)
    assert f"proxy refused the key {REDACTED} (Bearer {REDACTED})" in str(error)


@pytest.mark.parametrize("before", [1180, 1195, 1199, 1200, 1205])
def test_a_key_where_the_quoted_body_is_cut_is_not_shown_in_part(server, before):
    """An indented page echoing the key where the excerpt is cut: no part of the key shows."""
    key = "Zq9-notSKshaped-key-77"
    server.script(raw("<html>" + " " * before + f"<p>{key}</p></html>"))

    message = str(fault_of(server, api_key=key))

    assert not any(key[:length] in message for length in range(6, len(key) + 1))


def test_a_server_error_quoting_the_key_is_redacted_in_the_sdk_error(server):
    body = {"error": {"message": f"Incorrect API key provided: {KEY}.", "type": "invalid_request_error"}}
    server.script(Reply(body, 401))

    with pytest.raises(openai.AuthenticationError) as caught:
        client(server).create(HELLO)

    error = caught.value
    assert KEY not in str(error)
    assert KEY not in str(error.body)
    assert KEY not in error.message
    assert f"Incorrect API key provided: {REDACTED}." in str(error)


def test_a_key_that_does_not_look_like_one_is_redacted_too(server):
    key = "hunter2-is-my-password"
    server.script(Reply({"error": {"message": f"bad key {key}"}}, 403))

    with pytest.raises(openai.PermissionDeniedError) as caught:
        client(server, api_key=key).create(HELLO)

    assert key not in str(caught.value)


def test_the_key_from_the_environment_is_redacted(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "env-secret-key-42")
    server.script(raw("<html>env-secret-key-42 is not allowed here</html>"))

    error = fault_of(server, api_key=None)

    assert "env-secret-key-42" not in str(error)


def test_the_config_list_error_has_no_key_and_the_next_config_answers(server, backup):
    server.script(Reply({"error": {"message": f"key {KEY} revoked"}}, 401))
    backup.script(raw(HTML))
    client = ConfigListClient(
        {
            "config_list": [
                {"model": "first", "base_url": server.url, "api_key": KEY},
                {"model": "second", "base_url": backup.url, "api_key": "second-secret-key"},
            ],
            "max_retries": 0,
        }
    )

    with pytest.raises(AllConfigsFailedError) as caught:
        client.create(HELLO)

    message = str(caught.value)
    assert KEY not in message
    assert f"model 'first' at {server.url}: AuthenticationError: " in message
    assert (
        f"model 'second' at {backup.url}: ModelResponseError: model 'second' at {backup.url} answered"
        in message
    )
    assert all(KEY not in str(error) for _, _, error in caught.value.failures)


@pytest.mark.parametrize(
    "fault",
    [
        raw(HTML),
        sse(*completion_chunks(["x"])),
        {"choices": [], "model": "m"},
        completion(None, tool_calls=[("lookup_order", '{"order_')], finish_reason="length"),
    ],
    ids=["html", "unrequested-sse", "no-choices", "truncated-tool-call"],
)
def test_every_fault_moves_on_to_the_next_config(server, backup, fault):
    server.script(fault)
    backup.script(completion("from the backup"))
    client = ConfigListClient(
        {
            "config_list": [
                {"model": "primary", "base_url": server.url, "api_key": KEY, "max_retries": 0},
                {"model": "backup", "base_url": backup.url, "api_key": KEY},
            ]
        }
    )

    assert client.create(HELLO).message["content"] == "from the backup"


def test_in_a_chat_the_error_keeps_the_conversation_so_far_and_no_key(server):
    server.script(completion("Which order?"), Reply({"error": {"message": f"quota exceeded for {KEY}"}}, 400))
    assistant = ConversableAgent(
        "assistant",
        llm_config={"config_list": [{"model": "gpt-4o-mini", "base_url": server.url, "api_key": KEY}]},
        human_input_mode="NEVER",
    )
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER", default_auto_reply="Order 7.")

    with pytest.raises(ModelError) as caught:
        user.initiate_chat(assistant, "Where is my order?", max_turns=3, silent=True)

    assert KEY not in str(caught.value)
    assert f"quota exceeded for {REDACTED}" in str(caught.value)
    history = caught.value.chat_result.chat_history
    assert [m["content"] for m in history] == ["Where is my order?", "Which order?", "Order 7."]
    assert KEY not in str(caught.value.chat_result.stop_reason)


def test_in_a_chat_a_bad_body_keeps_the_conversation_so_far(server):
    server.script(raw(HTML))
    assistant = ConversableAgent(
        "assistant",
        llm_config={
            "config_list": [{"model": "gpt-4o-mini", "base_url": server.url, "api_key": KEY}],
            "max_retries": 0,
        },
        human_input_mode="NEVER",
    )
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")

    with pytest.raises(ModelError, match="answered with a body that is not JSON") as caught:
        user.initiate_chat(assistant, "hi", max_turns=1, silent=True)

    assert [m["content"] for m in caught.value.chat_result.chat_history] == ["hi"]


def test_redact_blanks_keys_tokens_and_url_credentials_but_not_words():
    text = (
        "sk-ant-api03-abcdefghijkl Bearer abc.def.ghijkl http://me:pa55word@host/v1 "
        "https://h/v1?key=AIzaSy0123456789abcdefghij&alt=json task-management secret-value x"
    )

    redacted = redact(text, ["secret-value", "x"])

    assert redacted == (
        f"{REDACTED} Bearer {REDACTED} http://me:{REDACTED}@host/v1 "
        f"https://h/v1?key={REDACTED}&alt=json task-management {REDACTED} x"
    )


# Anthropic -------------------------------------------------------------------------------------------


def anthropic_client(server: FakeServer, **kwargs) -> AnthropicClient:
    return AnthropicClient("claude-haiku-4-5", base_url=server.root, api_key=KEY, max_retries=0, **kwargs)


def test_anthropic_html_page_is_a_fault_and_a_quoted_key_is_redacted(server):
    server.script(raw(f"<html>bad key {KEY}</html>"))

    with pytest.raises(ModelResponseError) as caught:
        anthropic_client(server).create(HELLO)

    message = str(caught.value)
    assert message.startswith(
        f"model 'claude-haiku-4-5' at {server.root} answered with a body that is not JSON"
    )
    assert f"bad key {REDACTED}" in message and KEY not in message


def test_anthropic_server_error_quoting_the_key_is_redacted(server):
    server.script(
        Reply({"type": "error", "error": {"type": "authentication_error", "message": f"bad {KEY}"}}, 401)
    )

    with pytest.raises(anthropic.AuthenticationError) as caught:
        anthropic_client(server).create(HELLO)

    assert KEY not in str(caught.value)
    assert KEY not in str(caught.value.body)


def test_anthropic_tool_input_that_is_not_an_object_is_a_fault(server):
    body = anthropic_message(None, tool_uses=[("lookup_order", {})], stop_reason="max_tokens")
    body["content"][0]["input"] = '{"order_id": '
    server.script(body)

    with pytest.raises(
        ModelResponseError, match=r"'lookup_order' whose input is not a JSON object \(it stopped at"
    ):
        anthropic_client(server).create(HELLO)


@pytest.mark.parametrize(
    "usage",
    [
        None,
        {},
        {"prompt_tokens": -1000, "completion_tokens": 5},
        {"prompt_tokens": "12", "completion_tokens": 5},
    ],
    ids=["missing", "empty", "negative", "text"],
)
def test_usage_a_server_does_not_report_counts_as_the_most_the_call_can_have_used(server, usage):
    """A chat under a token budget on a server that reports no usable usage stops before the budget: its
    calls count as the bytes they sent and received."""
    from parley.limits import MaxTokens

    body = completion("Order 7 left the warehouse this morning.")
    body["usage"] = usage
    server.script(*[dict(body) for _ in range(30)])
    assistant = ConversableAgent(
        "assistant",
        llm_config={"config_list": [{"model": "gpt-4o-mini", "api_key": KEY, "base_url": server.url}]},
        human_input_mode="NEVER",
    )
    user = ConversableAgent(
        "user", llm_config=False, human_input_mode="NEVER", default_auto_reply="and then?"
    )

    with pytest.warns(UserWarning, match="reported no usable token usage"):
        result = user.initiate_chat(
            assistant, "Where is order 7?", max_turns=30, stop_when=MaxTokens(2_000), silent=True
        )

    sent = sum(len(json.dumps(request.body["messages"])) for request in server.requests)
    assert result.stop_reason.kind.value == "condition"
    assert 0 < sent + 40 * len(server.requests) <= 2_000
    counted = sum(
        usage["total_tokens"]
        for model, usage in result.cost["usage_including_cached_inference"].items()
        if model != "total_cost"
    )
    assert sent <= counted <= 2_000


def test_usage_not_reported_counts_a_reply_as_at_most_the_max_tokens_it_was_sent_with(server):
    long_reply = "word " * 400  # 2,000 bytes, cut off at max_tokens by the server
    body = completion(long_reply)
    body["usage"] = None
    server.script(dict(body), dict(body))

    with pytest.warns(UserWarning, match="reported no usable token usage"):
        capped = client(server).create(HELLO, max_tokens=50)
        uncapped = client(server).create(HELLO)

    assert server.requests[0].body["max_tokens"] == 50
    assert capped.usage.completion_tokens == 50
    assert uncapped.usage.completion_tokens >= len(long_reply)
    assert capped.usage.prompt_tokens == uncapped.usage.prompt_tokens >= len(HELLO[0]["content"])


def test_the_no_usage_warning_and_the_clients_repr_hide_a_password_in_the_base_url(server):
    body = completion("It shipped.")
    body["usage"] = None
    server.script(body)
    host = server.url.split("//", 1)[1]
    openai_client = OpenAIClient(
        "gpt-4o-mini",
        base_url=f"http://proxyuser:hunter2-PASSWORD@{host}?api-key=QUERYSECRET",
        api_key=KEY,
        max_retries=0,
    )

    with pytest.warns(UserWarning) as warned:
        openai_client.create(HELLO)

    shown = " ".join(str(warning.message) for warning in warned) + repr(openai_client)
    assert "reported no usable token usage" in shown
    assert "hunter2" not in shown and "QUERYSECRET" not in shown and "proxyuser" in shown


@pytest.mark.parametrize(
    "usage", [None, {"input_tokens": -5, "output_tokens": 3}], ids=["missing", "negative"]
)
def test_anthropic_usage_not_reported_counts_as_the_most_the_call_can_have_used(server, usage):
    body = anthropic_message("Order 7 left the warehouse.")
    body["usage"] = usage
    server.script(body)

    with pytest.warns(UserWarning, match="reported no usable token usage"):
        response = anthropic_client(server).create(HELLO)

    assert response.usage.prompt_tokens >= len(HELLO[0]["content"])
    assert response.usage.completion_tokens >= len("Order 7 left the warehouse.")


def test_anthropic_cache_tokens_count_in_the_prompt_and_the_price(server):
    body = anthropic_message("It shipped.", input_tokens=10, output_tokens=4)
    body["usage"].update(cache_creation_input_tokens=100, cache_read_input_tokens=1000)
    server.script(body)

    response = anthropic_client(server, price=[0.001, 0.002]).create(HELLO)

    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (1110, 4)
    assert response.cost == pytest.approx(((10 + 125 + 100) * 0.001 + 4 * 0.002) / 1000)
