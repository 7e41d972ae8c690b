"""The dataclasses that write their own ``__init__`` (parley.records) behave as generated ones do."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from typing import Any

import pytest

import parley.agent
import parley.budgets
import parley.chat_result
import parley.console
import parley.events
import parley.groupchat
import parley.journal
import parley.limits
import parley.models.base
import parley.models.streaming
import parley.state
import parley.termination
import parley.tools
from parley.records import FrozenRecord, Record


def _subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


RECORDS = sorted(
    {
        cls
        for cls in _subclasses(Record)
        if dataclasses.is_dataclass(cls) and cls.__module__.startswith("parley.")
    },
    key=lambda cls: cls.__qualname__,
)


def test_the_classes_import_parley_loads_are_records():
    names = {cls.__qualname__ for cls in RECORDS}
    assert {
        "StopReason",
        "ChatResult",
        "Usage",
        "ModelResponse",
        "StreamedText",
        "MessageSent",
        "Handoff",
    } <= names
    assert len(RECORDS) >= 25


def _arguments(cls: type) -> dict[str, Any]:
    return {item.name: object() for item in dataclasses.fields(cls) if item.init}


def _generated_twin(cls: type) -> type:
    """The same fields as a dataclass whose methods ``@dataclass`` generates."""
    frozen = issubclass(cls, FrozenRecord)
    fields = [(item.name, Any) for item in dataclasses.fields(cls) if item.init]
    return dataclasses.make_dataclass(cls.__qualname__, fields, frozen=frozen)


@pytest.mark.parametrize("cls", RECORDS, ids=lambda cls: cls.__qualname__)
def test_init_takes_the_fields_in_order_with_their_defaults(cls: type):
    parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]
    init_fields = [item for item in dataclasses.fields(cls) if item.init]
    assert [parameter.name for parameter in parameters] == [item.name for item in init_fields]
    for parameter, item in zip(parameters, init_fields, strict=True):
        if item.default is not dataclasses.MISSING:
            assert parameter.default == item.default, item.name
        elif item.default_factory is not dataclasses.MISSING:
            assert parameter.default is None, item.name
        else:
            assert parameter.default is inspect.Parameter.empty, item.name


@pytest.mark.parametrize("cls", RECORDS, ids=lambda cls: cls.__qualname__)
def test_each_field_holds_what_was_given_and_repr_and_equality_are_a_dataclass_s(cls: type):
    given = _arguments(cls)
    record = cls(**given)
    for name, value in given.items():
        assert getattr(record, name) is value, name
    twin = _generated_twin(cls)(**given)
    assert repr(record) == repr(twin)
    assert record == cls(**given)
    for name in given:
        assert record != cls(**{**given, name: object()}), name
    assert record != twin  # another class, as dataclasses compare
    assert dataclasses.replace(record) == record


@pytest.mark.parametrize("cls", RECORDS, ids=lambda cls: cls.__qualname__)
def test_frozen_records_refuse_assignment_and_hash_by_their_fields_others_are_unhashable(cls: type):
    given = _arguments(cls)
    record = cls(**given)
    first = next(iter(given))
    if issubclass(cls, FrozenRecord):
        with pytest.raises(dataclasses.FrozenInstanceError, match=first):
            setattr(record, first, 1)
        with pytest.raises(dataclasses.FrozenInstanceError):
            delattr(record, first)
        assert hash(record) == hash(cls(**given))
    else:
        with pytest.raises(TypeError, match="unhashable"):
            hash(record)
        setattr(record, first, 1)
        assert getattr(record, first) == 1


@pytest.mark.parametrize("cls", RECORDS, ids=lambda cls: cls.__qualname__)
def test_records_survive_pickle_and_copy(cls: type):
    given = {item.name: f"value of {item.name}" for item in dataclasses.fields(cls) if item.init}
    record = cls(**given)
    assert pickle.loads(pickle.dumps(record)) == record
    assert copy.deepcopy(record) == record
    assert copy.copy(record) == record


def test_fields_left_out_get_their_own_new_default():
    first, second = parley.chat_result.ChatResult(), parley.chat_result.ChatResult()
    assert first.chat_history == [] and first.chat_history is not second.chat_history
    assert first.cost == {} and first.cost is not second.cost
    assert parley.models.base.ModelResponse({}).usage == parley.models.base.Usage(0, 0)
    event = parley.events.ContextUpdated("triage", {"a": 1})
    assert event.removed == [] and (event.chat_id, event.seq, event.ts) == ("", 0, 0.0)
    assert dataclasses.asdict(parley.models.base.Usage(3, 4)) == {"prompt_tokens": 3, "completion_tokens": 4}


def test_chat_state_compares_by_identity_and_shows_its_fields():
    state = parley.state.ChatState("chat-1")
    assert state != parley.state.ChatState("chat-1")
    assert repr(state).startswith("ChatState(chat_id='chat-1', shape='chat', messages=[]")
