"""Namespaces are isolation boundaries: recall, list, export and erase never cross them."""

from __future__ import annotations

import unicodedata
import uuid
from typing import Any

import pytest
from django.apps import apps
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import user
from ttmemory import memory
from ttmemory.models import ApiKey, CiphertextUpgrade, FactUsage, MemorySession, SessionLease
from ttmemory.services.facts import facts_touch_recalled
from ttmemory.validation import is_invisible

pytestmark = pytest.mark.contract

TWIN_FACTS = [
    "Ada is allergic to peanuts",
    "Ada prefers window seats",
    "Ada's daughter is called Mia",
    "Ada works as a nurse in Lisbon",
]


def populate(namespace: str, owner: str) -> MemorySession:
    """A namespace with a session, messages, a snapshot, facts and a profile."""
    session = memory.session_open(namespace=namespace, key="chat")
    memory.message_add_many(
        session=session, messages=[user(f"{owner} says hi"), user(f"{owner} again")]
    )
    memory.snapshot_create(session=session, label=owner)
    for text in TWIN_FACTS:
        memory.fact_remember(namespace=namespace, text=text.replace("Ada", owner))
    memory.profile_update(namespace=namespace, kind="user", data={"name": owner})
    memory.session_state_update(session=session, values={"owner": owner})
    hits = memory.fact_recall(namespace=namespace, query="peanut window nurse", k=10).hits
    facts_touch_recalled(counts=[(fact.pk, 1) for fact, _ in hits])  # their FactUsage rows
    return session


def rows_per_table(namespace: str, session_ids: list[int]) -> dict[str, int]:
    """Rows of ``namespace`` in every ttmemory table (lease rows by session id)."""
    counts = {}
    for model in apps.get_app_config("ttmemory").get_models():
        field_names = {f.name for f in model._meta.get_fields()}
        if "namespace" in field_names:
            counts[model.__name__] = model._default_manager.filter(namespace=namespace).count()
        elif model is ApiKey:
            continue  # credentials granting namespaces; they hold no memory of one
        elif model is CiphertextUpgrade:
            continue  # one row per database-wide re-encryption; no namespace's data
        elif model is SessionLease:
            counts[model.__name__] = SessionLease.objects.filter(session_id__in=session_ids).count()
        elif model is FactUsage:  # a fact's recall statistics: its fact's namespace
            counts[model.__name__] = FactUsage.objects.filter(fact__namespace=namespace).count()
        else:
            raise AssertionError(f"{model.__name__} has no namespace: isolation is unchecked")
    return counts


def test_recall_list_and_export_of_one_namespace_never_show_the_other(db: Any) -> None:
    populate("tenant-a/user-1", "Ada")
    populate("tenant-b/user-1", "Ana")

    for query in ["peanut allergy", "window seat", "daughter", "nurse Lisbon"]:
        hits = memory.fact_recall(namespace="tenant-a/user-1", query=query, k=10).facts
        assert hits and all(f.namespace == "tenant-a/user-1" for f in hits)
        assert all("Ana" not in f.text for f in hits)
    assert all("Ana" not in f.text for f in memory.fact_list(namespace="tenant-a/user-1"))
    exported = str(memory.namespace_export(namespace="tenant-a/user-1"))
    assert "Ada" in exported and "Ana" not in exported
    assert memory.profile_get(namespace="tenant-a/user-1", kind="user") == {"name": "Ada"}


def test_forgetting_or_superseding_a_fact_of_another_namespace_is_not_found(db: Any) -> None:
    populate("a", "Ada")
    populate("b", "Ana")
    foreign = memory.fact_list(namespace="b")[0]

    from ttmemory.models import Fact

    with pytest.raises(Fact.DoesNotExist):
        memory.fact_forget(namespace="a", fact_id=foreign.pk)
    with pytest.raises(Fact.DoesNotExist):
        memory.fact_supersede(namespace="a", fact_id=foreign.pk, text="hijacked")
    assert Fact.objects.get(pk=foreign.pk).valid_to is None


def test_erase_removes_every_row_of_the_namespace_in_every_table_and_nothing_else(
    db: Any,
) -> None:
    erased = populate("erase-me", "Ada")
    kept = populate("keep-me", "Ana")
    SessionLease.objects.create(
        session_id=erased.pk, token="x", acquired_at=erased.created_at, expires_at=erased.created_at
    )
    before_kept = rows_per_table("keep-me", [kept.pk])

    receipt = memory.namespace_erase(namespace="erase-me")

    assert set(rows_per_table("erase-me", [erased.pk]).values()) == {0}
    assert rows_per_table("keep-me", [kept.pk]) == before_kept
    assert receipt.counts["message"] == 2 and receipt.counts["fact"] == 4
    assert before_kept["FactUsage"] > 0 and receipt.counts["fact_usage"] > 0
    assert receipt.counts["session_lease"] == 1 and receipt.total > 10
    assert "Ada" not in str(receipt)  # a receipt has counts, never content
    assert memory.namespace_export(namespace="erase-me")["facts"] == []


def test_export_holds_everything_decrypted(db: Any) -> None:
    session = populate("export-me", "Ada")
    memory.session_trim(session=session, max_tokens=5)

    exported = memory.namespace_export(namespace="export-me")

    (only,) = exported["sessions"]
    assert [m["message"]["content"] for m in only["messages"]] == ["Ada says hi", "Ada again"]
    assert [m["archived"] for m in only["messages"]] == [True, False]
    assert only["state"] == {"owner": "Ada"} and len(only["snapshots"]) == 1
    assert {f["text"] for f in exported["facts"]} == {t for t in TWIN_FACTS}
    assert exported["profiles"] == {"user": {"name": "Ada"}}
    import json

    json.dumps(exported)  # JSON-ready


namespace_names = st.text(
    alphabet=st.characters(
        codec="utf-8",
        exclude_categories=("Cc", "Cf", "Cs", "Zs", "Zl", "Zp"),
        exclude_characters="*/",
    ),
    min_size=1,
    max_size=30,
).map(lambda name: unicodedata.normalize("NFC", name))  # the namespace grammar
namespace_names = namespace_names.filter(
    # Default-ignorable code points outside Cf (U+E0000 is unassigned) are refused too.
    lambda name: not any(is_invisible(ch) for ch in name)
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(first=namespace_names, second=namespace_names, suffix=st.sampled_from(["", "/x", " x"]))
def test_any_two_namespaces_are_isolated(db: Any, first: str, second: str, suffix: str) -> None:
    unique = uuid.uuid4().hex[:6]
    a, b = f"{first}-{unique}", f"{first}-{unique}{suffix}" if suffix else f"{second}-{unique}b"
    if a == b:
        return
    memory.fact_remember(namespace=a, text="the launch code is blue falcon")
    memory.fact_remember(namespace=b, text="the launch code is blue falcon!")

    hits_a = memory.fact_recall(namespace=a, query="launch code", k=10).facts
    assert [f.namespace for f in hits_a] == [a]
    memory.namespace_erase(namespace=a)
    assert [
        f.namespace for f in memory.fact_recall(namespace=b, query="launch code", k=10).facts
    ] == [b]
    memory.namespace_erase(namespace=b)
