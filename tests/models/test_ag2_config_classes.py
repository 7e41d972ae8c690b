"""AG2's LLMConfig, OpenAILLMConfigEntry, Cache and exception classes, used as AG2 code uses them.

The expected values are what AG2 0.13.4 gives for the same code (measured against the same fake server
where a model is involved); where parley differs, the test says why.
"""

from __future__ import annotations

import copy
import json

import pytest
from fake_servers import FakeServer, anthropic_message, completion

import parley
from parley import (
    AgentNameConflictError,
    AssistantAgent,
    Cache,
    ConversableAgent,
    GroupChat,
    InvalidCarryOverTypeError,
    LLMConfig,
    NoEligibleSpeakerError,
    OpenAILLMConfigEntry,
    SenderRequiredError,
    UndefinedNextAgentError,
    UserProxyAgent,
)
from parley.models import ConfigListClient
from parley.models.cache import active_cache, using_cache
from parley.models.llm_config import AnthropicLLMConfigEntry

HELLO = [{"role": "user", "content": "Capital of France?"}]


@pytest.fixture
def server():
    with FakeServer() as running:
        yield running


def user() -> ConversableAgent:
    return ConversableAgent("user", llm_config=False, human_input_mode="NEVER")


# LLMConfig --------------------------------------------------------------------------------------------


def two_configs() -> LLMConfig:
    return LLMConfig(
        {"model": "gpt-4o-mini", "api_key": "sk-secret-123456"},
        {"model": "gpt-4o", "base_url": "localhost:8000/v1"},
        temperature=0.5,
        cache_seed=None,
        timeout=30,
    )


def test_llm_config_reads_like_ag2s():
    config = two_configs()

    assert config.model_dump() == {
        "temperature": 0.5,
        "timeout": 30,
        "config_list": [
            {
                "temperature": 0.5,
                "api_type": "openai",
                "model": "gpt-4o-mini",
                "api_key": "sk-secret-123456",
                "tags": [],
                "stream": False,
            },
            {
                "temperature": 0.5,
                "api_type": "openai",
                "model": "gpt-4o",
                "base_url": "http://localhost:8000/v1",
                "tags": [],
                "stream": False,
            },
        ],
    }
    assert repr(config).startswith(
        "LLMConfig(temperature=0.5, timeout=30, config_list=[{'temperature': 0.5, "
    )
    assert "'api_key': '**********'" in repr(config) and "sk-secret" not in repr(config)
    assert type(config.config_list[0]) is OpenAILLMConfigEntry
    assert config.config_list[1].base_url == "http://localhost:8000/v1"
    assert (config["temperature"], config.get("cache_seed"), config.get("nope", 7)) == (0.5, None, 7)
    assert ("temperature" in config, "nope" in config) == (True, False)
    assert (config.temperature, config.timeout) == (0.5, 30)
    assert list(config.keys()) == ["temperature", "timeout", "config_list"]
    with pytest.raises(KeyError):
        config["nope"]
    config["temperature"] = 0.9
    assert config.temperature == 0.9
    with pytest.raises(ValueError, match="no key 'nope'"):
        config["nope"] = 1
    assert copy.copy(config) == config and copy.copy(config) is not config
    assert json.loads(config.model_dump_json())["config_list"][0]["api_key"] == "sk-secret-123456"


def test_an_entry_reads_like_ag2s():
    entry = OpenAILLMConfigEntry(model="gpt-4o-mini", api_key="sk-abc", base_url="http://x/v1")

    assert repr(entry) == (
        "OpenAILLMConfigEntry(api_type='openai', model='gpt-4o-mini', api_key='**********', "
        "base_url='http://x/v1', tags=[], stream=False)"
    )
    assert entry.model_dump() == {
        "api_type": "openai",
        "model": "gpt-4o-mini",
        "api_key": "sk-abc",
        "base_url": "http://x/v1",
        "tags": [],
        "stream": False,
    }
    assert (entry["api_key"], entry.get("api_key"), entry.api_type) == ("sk-abc", "sk-abc", "openai")
    assert LLMConfig(entry, temperature=0.3).model_dump() == {
        "temperature": 0.3,
        "config_list": [{**entry.model_dump(), "temperature": 0.3}],
    }


def test_an_anthropic_config_gets_ag2s_defaults():
    config = LLMConfig({"api_type": "anthropic", "model": "claude-x"})

    assert type(config.config_list[0]) is AnthropicLLMConfigEntry
    assert config.model_dump() == {
        "config_list": [
            {"max_tokens": 4096, "api_type": "anthropic", "model": "claude-x", "tags": [], "stream": False}
        ]
    }


def test_where_keeps_the_matching_configs():
    config = two_configs()

    assert [entry.model for entry in config.where(model="gpt-4o").config_list] == ["gpt-4o"]
    assert [entry.model for entry in config.where(model=["gpt-4o", "gpt-4o-mini"]).config_list] == [
        "gpt-4o-mini",
        "gpt-4o",
    ]
    assert [entry.model for entry in config.where(exclude=True, model="gpt-4o").config_list] == [
        "gpt-4o-mini"
    ]
    with pytest.raises(ValueError, match="no config"):
        config.where(model="o3")


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda: LLMConfig(), ValueError, "at least one model config"),
        (lambda: LLMConfig({"model": ""}), ValueError, "model"),
        (lambda: LLMConfig({"api_key": "x"}), ValueError, "model"),
        (lambda: LLMConfig({"model": "m"}, temperature=3), ValueError, "temperature"),
        (
            lambda: LLMConfig({"model": "m", "api_type": "nope"}),
            ValueError,
            r"unknown api_type 'nope'; parley supports",
        ),
        (lambda: LLMConfig({"model": "m"}, foo=1), TypeError, "unexpected keyword arguments"),
        (lambda: LLMConfig({"model": "m", "price": [1]}), ValueError, "price"),
        (lambda: ConversableAgent("a", llm_config=42), TypeError, "llm_config must be"),
    ],
)
def test_bad_configs_fail_when_made(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_an_agent_talks_through_an_llm_config(server):
    server.script(completion("Paris."))
    config = LLMConfig(
        {"model": "gpt-4o-mini", "base_url": server.url, "api_key": "sk-x"}, temperature=0.2, seed=7
    )
    assistant = AssistantAgent("assistant", llm_config=config)

    result = user().initiate_chat(assistant, "Capital of France?", max_turns=1, silent=True)

    assert result.summary == "Paris."
    assert assistant.llm_config == config
    body = server.requests[0].body
    assert (body["model"], body["temperature"], body["seed"]) == ("gpt-4o-mini", 0.2, 7)
    assert "stream" not in body and "tags" not in body


def test_an_entry_and_a_list_of_configs_are_llm_configs_too(server):
    server.script(completion("from the entry"), completion("from the list"))
    entry = OpenAILLMConfigEntry(model="gpt-4o-mini", base_url=server.url, api_key="sk-x")

    by_entry = AssistantAgent("entry", llm_config=entry)
    by_list = AssistantAgent(
        "listed", llm_config=[{"model": "gpt-4o-mini", "base_url": server.url, "api_key": "x"}]
    )

    assert user().initiate_chat(by_entry, "hi", max_turns=1, silent=True).summary == "from the entry"
    assert user().initiate_chat(by_list, "hi", max_turns=1, silent=True).summary == "from the list"


def test_an_anthropic_entry_sends_its_max_tokens(server):
    server.script(anthropic_message("Paris."))
    config = LLMConfig(
        {"api_type": "anthropic", "model": "claude-haiku-4-5", "base_url": server.root, "api_key": "a"}
    )

    result = user().initiate_chat(AssistantAgent("claude", llm_config=config), "hi", max_turns=1, silent=True)

    assert result.summary == "Paris."
    assert server.requests[0].body["max_tokens"] == 4096


def test_ensure_config_takes_every_form_ag2_takes():
    from_dict = LLMConfig.ensure_config({"config_list": [{"model": "m", "api_key": "k"}], "temperature": 0.2})

    assert from_dict.model_dump() == {
        "temperature": 0.2,
        "config_list": [
            {
                "temperature": 0.2,
                "api_type": "openai",
                "model": "m",
                "api_key": "k",
                "tags": [],
                "stream": False,
            }
        ],
    }
    assert LLMConfig.ensure_config({"model": "m"}).config_list[0].model == "m"
    assert LLMConfig.ensure_config([{"model": "a"}, {"model": "b"}]).config_list[1].model == "b"
    assert LLMConfig.ensure_config(from_dict) == from_dict


def test_the_forms_ag2_took_before_0_11_still_work():
    # AG2 0.13.4 refuses these (TypeError); code written for AG2 0.8-0.10 uses them.
    assert LLMConfig(config_list=[{"model": "a"}], temperature=0).config_list[0].temperature == 0
    assert LLMConfig(model="gpt-4o-mini", api_key="k").config_list[0].get("api_key") == "k"


def test_from_json_reads_a_file_or_a_variable(tmp_path, monkeypatch):
    configs = [{"model": "gpt-4o", "tags": ["big"]}, {"model": "gpt-4o-mini", "tags": ["small"]}]
    (tmp_path / "OAI_CONFIG_LIST").write_text(json.dumps(configs))
    monkeypatch.setenv("OAI_CONFIG_LIST", json.dumps(configs))

    from_file = LLMConfig.from_json(path="OAI_CONFIG_LIST", file_location=str(tmp_path), temperature=0)
    from_env = LLMConfig.from_json(env="OAI_CONFIG_LIST", filter_dict={"tags": ["small"]})

    assert [entry.model for entry in from_file.config_list] == ["gpt-4o", "gpt-4o-mini"]
    assert from_file.temperature == 0
    assert [entry.model for entry in from_env.config_list] == ["gpt-4o-mini"]


# with LLMConfig(...): ------------------------------------------------------------------------------------


def test_agents_made_in_a_with_block_take_its_config(server):
    # AG2 0.8-0.10 behaviour; AG2 0.13.4 removed the context manager (TypeError: not a context manager).
    server.script(completion("Paris."))
    config = LLMConfig({"model": "gpt-4o-mini", "base_url": server.url, "api_key": "sk-x"})

    with config as entered:
        inside = AssistantAgent("inside")
        explicit_none = ConversableAgent("no_model", llm_config=False)
        proxy = UserProxyAgent("proxy")
    outside = AssistantAgent("outside")

    assert entered is config
    assert inside.llm_config == config and inside.llm_config is not config  # its own copy, as in AG2
    assert (explicit_none.llm_config, proxy.llm_config, outside.llm_config) == (False, False, False)
    assert outside.client is None
    assert user().initiate_chat(inside, "Capital of France?", max_turns=1, silent=True).summary == "Paris."
    assert LLMConfig.get_current_llm_config() is None


def test_with_blocks_nest():
    outer, inner = LLMConfig({"model": "outer"}), LLMConfig({"model": "inner"})

    with outer:
        with inner:
            assert LLMConfig.get_current_llm_config() is inner
            assert AssistantAgent("a").llm_config == inner
        assert AssistantAgent("b").llm_config == outer


# Cache -----------------------------------------------------------------------------------------------


def assistant_for(server: FakeServer, **options) -> AssistantAgent:
    return AssistantAgent(
        "assistant",
        llm_config={
            "config_list": [{"model": "gpt-4o-mini", "base_url": server.url, "api_key": "sk-x"}],
            **options,
        },
    )


def test_chats_in_a_cache_block_are_answered_from_it(server, tmp_path):
    server.script(completion("Paris."), completion("Paris again."))
    assistant = assistant_for(server)

    with Cache.disk(cache_seed=7, cache_path_root=str(tmp_path)) as cache:
        first = user().initiate_chat(assistant, "Capital of France?", max_turns=1, silent=True)
        second = user().initiate_chat(assistant, "Capital of France?", max_turns=1, silent=True)

    assert isinstance(cache, Cache)
    assert (first.summary, second.summary, len(server.requests)) == ("Paris.", "Paris.", 1)
    assert second.cost["usage_excluding_cached_inference"] == {"total_cost": 0}
    assert second.cost["usage_including_cached_inference"]["fake-model"]["prompt_tokens"] == 10
    assert (tmp_path / "7" / "parley.sqlite").is_file()
    assert active_cache.get() is None


def test_initiate_chat_answers_from_the_cache_it_is_given(server, tmp_path):
    server.script(completion("Paris."), completion("Paris again."))
    assistant = assistant_for(server)
    cache = Cache.disk(cache_seed=4, cache_path_root=str(tmp_path))

    first = user().initiate_chat(assistant, "Capital of France?", max_turns=1, silent=True, cache=cache)
    second = user().initiate_chat(assistant, "Capital of France?", max_turns=1, silent=True, cache=cache)

    assert (first.summary, second.summary, len(server.requests)) == ("Paris.", "Paris.", 1)
    assert cache.cache.count() == 1


def test_run_answers_from_the_cache_it_is_given(server, tmp_path):
    server.script(completion("Paris."), completion("Paris again."))
    assistant = assistant_for(server)
    cache = Cache.disk(cache_seed=3, cache_path_root=str(tmp_path))

    first = user().run(assistant, message="Capital of France?", max_turns=1, cache=cache)
    assert first.summary == "Paris."  # a run goes on in a thread of its own: wait for it
    second = user().run(assistant, message="Capital of France?", max_turns=1, cache=cache)

    assert (second.summary, len(server.requests)) == ("Paris.", 1)
    assert cache.cache.count() == 1


def test_a_disk_cache_outlives_the_block_and_the_object(server, tmp_path):
    server.script(completion("Paris."), completion("Paris again."))
    assistant = assistant_for(server)

    with Cache.disk(cache_seed="seed", cache_path_root=str(tmp_path)):
        user().initiate_chat(assistant, "Capital of France?", max_turns=1, silent=True)
    uncached = user().initiate_chat(assistant, "Capital of France?", max_turns=1, silent=True)
    with Cache.disk(cache_seed="seed", cache_path_root=str(tmp_path)):
        cached = user().initiate_chat(assistant, "Capital of France?", max_turns=1, silent=True)

    assert (uncached.summary, cached.summary, len(server.requests)) == ("Paris again.", "Paris.", 2)


def test_an_active_cache_comes_before_cache_seed(server, tmp_path):
    server.script(completion("Paris."))
    client = ConfigListClient(
        {
            "config_list": [{"model": "gpt-4o-mini", "base_url": server.url, "api_key": "x"}],
            "cache_seed": 1,
            "cache_path_root": str(tmp_path),
        }
    )
    cache = Cache.disk(cache_seed=2, cache_path_root=str(tmp_path))

    with using_cache(cache):
        assert client.create(HELLO).message["content"] == "Paris."
        assert client.create(HELLO).cached

    assert cache.cache.count() == 1
    assert not (tmp_path / "1").exists()


def test_using_no_cache_changes_nothing(server, tmp_path):
    server.script(completion("one"), completion("two"))
    client = ConfigListClient({"config_list": [{"model": "m", "base_url": server.url, "api_key": "x"}]})

    with using_cache(None):
        answers = [client.create(HELLO).message["content"] for _ in range(2)]

    assert answers == ["one", "two"]


def test_cache_configs_ag2_has_and_parley_does_not():
    with pytest.raises(ValueError, match=r"unknown Cache config keys \['foo'\]"):
        Cache({"cache_seed": 1, "foo": 2})
    with pytest.raises(ValueError, match="parley keeps its response cache on disk"):
        Cache.redis()
    assert Cache.disk().config == {"cache_seed": "42", "cache_path_root": ".cache"}
    assert Cache.get_current_cache() is None


# exceptions ------------------------------------------------------------------------------------------


def test_ag2s_exceptions_are_raised_where_ag2_raises_them():
    a, twin, c = (ConversableAgent(name, llm_config=False) for name in ("a", "a", "c"))

    with pytest.raises(AgentNameConflictError):
        GroupChat([a, twin, c], messages=[])
    with pytest.raises(UndefinedNextAgentError):
        GroupChat([a, c], messages=[]).next_agent(a, [ConversableAgent("z", llm_config=False)])
    with pytest.raises(InvalidCarryOverTypeError):
        a.initiate_chat(c, message="hi", carryover=42, max_turns=1, silent=True)


def test_ag2s_exceptions_are_the_builtin_ones_parley_raised_before():
    assert issubclass(AgentNameConflictError, ValueError)
    assert issubclass(UndefinedNextAgentError, ValueError)
    assert issubclass(InvalidCarryOverTypeError, TypeError)
    assert NoEligibleSpeakerError().message == "no agent may speak next"
    assert str(SenderRequiredError("who?")) == "who?"
    assert {"AgentNameConflictError", "LLMConfig", "OpenAILLMConfigEntry", "Cache"} <= set(parley.__all__)


WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


def test_tools_in_an_llm_config_are_offered_and_registered_ones_listed_in_the_agents_copy(server):
    server.script(completion("Sunny."), completion("4"))
    entry = {"model": "gpt-4o-mini", "base_url": server.url, "api_key": "sk-x"}
    shared = LLMConfig(entry, tools=[WEATHER])
    assistant = AssistantAgent("assistant", llm_config=shared)
    adder = AssistantAgent("adder", llm_config=shared)

    def add(x: int, y: int) -> int:
        """Add."""
        return x + y

    parley.register_function(add, caller=adder, executor=user(), description="Add.")
    user().initiate_chat(assistant, "Weather in Oslo?", max_turns=1, silent=True)
    user().initiate_chat(adder, "2 + 2?", max_turns=1, silent=True)

    assert [t["function"]["name"] for t in server.requests[0].body["tools"]] == ["get_weather"]
    assert [t["function"]["name"] for t in server.requests[1].body["tools"]] == ["get_weather", "add"]
    assert [t["function"]["name"] for t in adder.llm_config["tools"]] == ["get_weather", "add"]
    assert [t["function"]["name"] for t in adder.llm_config.tools] == ["get_weather", "add"]
    assert [t["function"]["name"] for t in shared.tools] == ["get_weather"]  # the user's own is untouched


def test_a_config_list_of_entry_objects_in_a_dict_works_as_in_ag2(server):
    server.script(completion("from the entry"), completion("from the config's list"))
    entry = OpenAILLMConfigEntry(model="gpt-4o-mini", base_url=server.url, api_key="sk-x")
    config = LLMConfig({"model": "gpt-4o", "base_url": server.url, "api_key": "sk-x"})

    by_entry = AssistantAgent("entry", llm_config={"config_list": [entry]})
    by_list = AssistantAgent("listed", llm_config={"config_list": config.config_list, "temperature": 0.2})

    assert user().initiate_chat(by_entry, "hi", max_turns=1, silent=True).summary == "from the entry"
    assert user().initiate_chat(by_list, "hi", max_turns=1, silent=True).summary == "from the config's list"
    assert server.requests[0].body["model"] == "gpt-4o-mini"
    assert (server.requests[1].body["model"], server.requests[1].body["temperature"]) == ("gpt-4o", 0.2)


def test_an_ag2_custom_client_class_is_an_error_before_any_request(server):
    config = {"config_list": [{"model": "mine", "model_client_cls": "MyClient", "base_url": server.url}]}

    with pytest.raises(ValueError, match="model_client_cls 'MyClient' names an AG2 custom client class"):
        AssistantAgent("assistant", llm_config=config)
    assert server.requests == []
