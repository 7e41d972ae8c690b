"""Rebuilding what a stored chat says from its records, ignoring what readers do not know."""

from __future__ import annotations

import json

import pytest

from parley.store import StoredRecord, StoreError, read_transcript

from .store_helpers import support_chat_records


def test_a_finished_swarm_is_rebuilt_from_its_records():
    transcript = read_transcript("support-1", support_chat_records())

    assert (transcript.shape, transcript.agents, transcript.finished) == (
        "swarm",
        ["triage", "billing"],
        True,
    )
    assert transcript.record_count == 12
    assert transcript.speakers == [
        "customer",
        "triage",
        "_Swarm_Tool_Executor",
        "billing",
        "_Swarm_Tool_Executor",
        "billing",
    ]
    assert [message.get("role") for message in transcript.messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "user",
    ]
    assert transcript.handoffs == {2: "billing"}
    assert transcript.stop_reason == {
        "kind": "terminate_target",
        "detail": "billing's after-work ends the chat",
        "agent": "billing",
    }
    assert transcript.summary == "Refunded.\nIt reaches your card in 3-5 days."


def test_context_is_followed_through_every_change():
    transcript = read_transcript("support-1", support_chat_records())

    assert [
        (change.after_message, change.agent, change.context) for change in transcript.context_changes
    ] == [
        (-1, None, {"refunds": []}),
        (2, "_Swarm_Tool_Executor", {"refunds": [], "issue": "charged twice"}),
        (4, "billing", {"refunds": ["CH-301"]}),
    ]
    assert transcript.context_changes[2].removed == ["issue"]
    assert transcript.context_variables == {"refunds": ["CH-301"]}


def test_usage_is_summed_per_model_in_ag2s_shape():
    transcript = read_transcript("support-1", support_chat_records())

    assert transcript.usage == {
        "gpt-4o-mini": {
            "calls": 3,
            "prompt_tokens": 900,
            "completion_tokens": 60,
            "cost": pytest.approx(0.0003),
        }
    }
    usage = transcript.usage_dict()
    assert usage["usage_including_cached_inference"]["gpt-4o-mini"] == {
        "cost": pytest.approx(0.0003),
        "prompt_tokens": 900,
        "completion_tokens": 60,
        "total_tokens": 960,
    }
    assert usage["usage_excluding_cached_inference"]["gpt-4o-mini"]["total_tokens"] == 640
    assert usage["usage_excluding_cached_inference"]["total_cost"] == pytest.approx(0.0002)


def test_an_unfinished_chat_says_so():
    records = support_chat_records()[:4]

    transcript = read_transcript("support-1", records)

    assert not transcript.finished
    assert transcript.stop_reason is None and transcript.summary is None
    assert len(transcript.messages) == 2


def test_unknown_kinds_and_keys_are_ignored_and_names_come_from_the_speaker():
    records = [
        StoredRecord(
            0,
            "chat_started",
            json.dumps({"kind": "chat_started", "shape": "chat", "agents": ["a", "b"], "x": 1}),
        ),
        StoredRecord(
            1, "hologram", json.dumps({"kind": "hologram", "message": {"content": "not a message"}})
        ),
        StoredRecord(
            2,
            "message",
            json.dumps({"kind": "message", "speaker": "a", "message": {"content": "hi"}, "mood": "good"}),
        ),
        StoredRecord(3, "message", json.dumps({"kind": "message", "speaker": "b"})),
    ]

    transcript = read_transcript("c", records)

    assert transcript.messages == [{"content": "hi", "name": "a"}]
    assert transcript.to_json() == {
        "chat_id": "c",
        "shape": "chat",
        "agents": ["a", "b"],
        "finished": False,
        "messages": [{"content": "hi", "name": "a"}],
        "context_variables": {},
        "stop_reason": None,
        "usage": {
            "usage_including_cached_inference": {"total_cost": 0},
            "usage_excluding_cached_inference": {"total_cost": 0},
        },
        "summary": None,
    }


@pytest.mark.parametrize(
    ("data", "why"), [("{not json", "is not valid JSON"), ("[1, 2]", "is not a JSON object")]
)
def test_a_record_that_is_not_a_json_object_is_named(data: str, why: str):
    with pytest.raises(StoreError, match=f"record 7 of chat 'c' {why}"):
        read_transcript("c", [StoredRecord(7, "message", data)])
