"""Facts in the admin: keyword search on encrypted text, filters, chains, correct, forget."""

from __future__ import annotations

from typing import Any

from django.test import Client

from tests.admin.conftest import NAMESPACE, VIEW_ALL, Conversation, MakeClient, page
from ttmemory import memory
from ttmemory.models import AuditEntry, Fact

LIST = "/admin/ttmemory/fact/"


def fact_url(fact: Fact) -> str:
    return f"{LIST}{fact.pk}/change/"


def listed(body: str, fact: Fact) -> bool:
    return f'href="{fact_url(fact)}' in body  # list links carry the filters after the url


def test_keyword_search_finds_masked_facts_through_the_blind_index(
    conversation: Conversation, support_client: Client
) -> None:
    other = memory.fact_remember(namespace="user-7", text="Bob is allergic to cats")
    body = page(support_client.get(LIST, {"q": "Allergic"}))
    assert listed(body, conversation.kept_fact) and listed(body, other)
    assert not listed(body, conversation.bad_fact)
    assert "allergic to" not in body  # found, and still masked

    body = page(support_client.get(LIST, {"q": "peanuts allergic"}))  # every word must match
    assert listed(body, conversation.kept_fact) and not listed(body, other)
    body = page(support_client.get(LIST, {"q": "allergic", "namespace": "user-7"}))
    assert listed(body, other) and not listed(body, conversation.kept_fact)
    body = page(support_client.get(LIST, {"q": NAMESPACE}))
    assert listed(body, conversation.kept_fact) and not listed(body, other)
    body = page(support_client.get(LIST, {"q": f"#{other.pk}"}))
    assert listed(body, other) and not listed(body, conversation.kept_fact)


def test_search_finds_superseded_versions_too(
    conversation: Conversation, support_client: Client
) -> None:
    new = memory.fact_supersede(
        namespace=NAMESPACE, fact_id=conversation.bad_fact.pk, text="Ada flies to Rome"
    )
    body = page(support_client.get(LIST, {"q": "Paris"}))
    assert listed(body, conversation.bad_fact) and not listed(body, new)


def test_filters_by_kind_validity_and_namespace(
    conversation: Conversation, support_client: Client
) -> None:
    pref = memory.fact_remember(
        namespace=NAMESPACE, text="Ada likes aisle seats", kind="preference"
    )
    other = memory.fact_remember(namespace="user-7", text="Bob likes trains")
    new = memory.fact_supersede(
        namespace=NAMESPACE, fact_id=conversation.bad_fact.pk, text="Ada flies to Rome"
    )
    body = page(support_client.get(LIST, {"kind": "preference"}))
    assert listed(body, pref) and not listed(body, other)
    body = page(support_client.get(LIST, {"validity": "superseded"}))
    assert listed(body, conversation.bad_fact) and not listed(body, new)
    body = page(support_client.get(LIST, {"validity": "current"}))
    assert listed(body, new) and not listed(body, conversation.bad_fact)
    body = page(support_client.get(LIST, {"namespace": "user-7"}))
    assert listed(body, other) and not listed(body, pref)


def test_detail_shows_the_supersession_chain(
    conversation: Conversation, support_client: Client, settings: Any
) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "ADMIN_MASK_CONTENT": False}
    first = conversation.bad_fact
    second = memory.fact_supersede(namespace=NAMESPACE, fact_id=first.pk, text="Ada flies to Rome")
    third = memory.fact_supersede(namespace=NAMESPACE, fact_id=second.pk, text="Ada flies to Oslo")
    body = page(support_client.get(fact_url(second)))
    chain = body.split('id="chain"')[1]
    assert chain.index("Paris") < chain.index("Rome") < chain.index("Oslo")
    assert f'href="{fact_url(first)}"' in chain and f'href="{fact_url(third)}"' in chain
    assert "superseded" in chain and "current" in chain
    source = f"session #{conversation.session.pk}</a>, messages 9"
    assert source in page(support_client.get(fact_url(first)))


def test_fact_text_is_masked_until_revealed_and_reveal_covers_the_chain(
    conversation: Conversation, support_client: Client
) -> None:
    fact = conversation.bad_fact
    new = memory.fact_supersede(namespace=NAMESPACE, fact_id=fact.pk, text="Ada flies to Rome")
    assert "Paris" not in page(support_client.get(fact_url(fact)))
    response = support_client.post(f"{LIST}{new.pk}/reveal/", {"reason": "ticket 5"})
    assert response.status_code == 302
    entry = AuditEntry.objects.get(action="reveal")
    assert (entry.object_type, entry.object_id) == ("fact", str(new.pk))
    assert sorted(entry.details["ids"]) == sorted([fact.pk, new.pk])
    body = page(support_client.get(fact_url(new)))
    assert "Ada flies to Rome" in body and "Ada flies to Paris on Friday" in body
    assert "Ada flies to Rome" in page(support_client.get(LIST))
    assert "allergic" not in page(support_client.get(LIST))  # other facts stay masked


def test_correcting_a_fact_supersedes_it_and_is_recorded(
    conversation: Conversation, support_client: Client
) -> None:
    fact = conversation.kept_fact
    url = f"{LIST}{fact.pk}/correct/"
    assert support_client.get(url).status_code == 200
    response = support_client.post(url, {"text": "Ada is allergic to peanuts and shellfish"})
    assert response.status_code == 200  # no reason: nothing done
    assert Fact.objects.get(pk=fact.pk).superseded_by_id is None

    response = support_client.post(
        url, {"text": "Ada is allergic to peanuts and shellfish", "reason": "customer call"}
    )
    old = Fact.objects.get(pk=fact.pk)
    new = Fact.objects.get(pk=old.superseded_by_id)
    assert response.status_code == 302 and response["Location"] == fact_url(new)
    assert old.valid_to is not None and new.valid_to is None
    assert new.text == "Ada is allergic to peanuts and shellfish"
    entry = AuditEntry.objects.get(action="fact_correct")
    assert entry.details == {"fact": fact.pk, "new_fact": new.pk}
    assert (entry.reason, entry.namespace) == ("customer call", NAMESPACE)
    assert "shellfish" not in str(entry.details)

    again = support_client.post(url, {"text": "something else", "reason": "x"}, follow=True)
    assert "correct the current version" in page(again)  # the old version is not current


def test_forgetting_a_fact_deletes_it_and_is_recorded(
    conversation: Conversation, support_client: Client
) -> None:
    fact = conversation.kept_fact
    url = f"{LIST}{fact.pk}/forget/"
    assert "Yes, forget" in page(support_client.get(url))
    response = support_client.post(url, {"reason": "GDPR request 88"})
    assert response.status_code == 302
    assert not Fact.objects.filter(pk=fact.pk).exists()
    entry = AuditEntry.objects.get(action="fact_forget")
    assert (entry.object_id, entry.reason) == (str(fact.pk), "GDPR request 88")


def test_forget_action_on_the_list_asks_for_a_reason(
    conversation: Conversation, support_client: Client
) -> None:
    ids = [conversation.kept_fact.pk, conversation.bad_fact.pk]
    form = {"action": "forget_action", "_selected_action": ids}
    response = support_client.post(LIST, form)
    assert response.status_code == 200 and "Yes, forget" in page(response)
    assert Fact.objects.filter(pk__in=ids).count() == 2

    response = support_client.post(LIST, {**form, "post": "yes", "reason": "erasure ticket"})
    assert response.status_code == 302
    assert not Fact.objects.filter(pk__in=ids).exists()
    assert AuditEntry.objects.filter(action="fact_forget").count() == 2


def test_correct_and_forget_need_their_permissions(
    conversation: Conversation, staff_client: MakeClient
) -> None:
    client = staff_client(*VIEW_ALL)
    fact = conversation.kept_fact
    body = page(client.get(fact_url(fact)))
    assert "Correct&hellip;" not in body and "Forget&hellip;" not in body
    assert client.post(f"{LIST}{fact.pk}/correct/", {"text": "x", "reason": "x"}).status_code == 403
    assert client.post(f"{LIST}{fact.pk}/forget/", {"reason": "x"}).status_code == 403
    response = client.post(
        LIST,
        {"action": "forget_action", "_selected_action": [fact.pk], "post": "yes", "reason": "x"},
    )
    assert Fact.objects.filter(pk=fact.pk).exists()
    assert response.status_code in (200, 302)
    assert not AuditEntry.objects.exists()


def test_profiles_are_masked(conversation: Conversation, support_client: Client) -> None:
    memory.profile_update(namespace=NAMESPACE, kind="user", data={"name": "Ada Lovelace"})
    profile_list = page(support_client.get("/admin/ttmemory/profile/"))
    assert "name" in profile_list and "Ada Lovelace" not in profile_list
    from ttmemory.models import Profile

    profile = Profile.objects.get(namespace=NAMESPACE)
    url = f"/admin/ttmemory/profile/{profile.pk}/change/"
    assert "Ada Lovelace" not in page(support_client.get(url))
    support_client.post(f"/admin/ttmemory/profile/{profile.pk}/reveal/", {"reason": "t"})
    assert "Ada Lovelace" in page(support_client.get(url))


def test_forgetting_under_a_legal_hold_shows_the_hold_and_keeps_the_fact(
    conversation: Conversation, support_client: Client
) -> None:
    """A support agent's forget, as a page or as a list action, on a held namespace: an error
    message naming the hold, never a server error; the fact stays."""
    fact = conversation.kept_fact
    memory.legal_hold_place(namespace=fact.namespace, reason="case 34")
    response = support_client.post(f"{LIST}{fact.pk}/forget/", {"reason": "x"}, follow=True)
    assert response.status_code == 200 and "case 34" in page(response)
    form = {"action": "forget_action", "_selected_action": [fact.pk], "post": "yes", "reason": "x"}
    response = support_client.post(LIST, form, follow=True)
    assert response.status_code == 200 and "case 34" in page(response)
    assert Fact.objects.filter(pk=fact.pk).exists()
    assert not AuditEntry.objects.filter(action="fact_forget").exists()
