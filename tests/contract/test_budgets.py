"""Budgets that hold (issue 14, finding 6): a window or prompt never exceeds ``max_tokens``,
keeps tool groups whole and never starts with an answer whose question was cut; what must be
kept and does not fit is a clear error (or, with ``strict=False``, reported). Every database."""

from __future__ import annotations

import itertools
import logging
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import assistant, tool_call, tool_result, user
from ttmemory import memory
from ttmemory.conf import app_settings
from ttmemory.conversation import count_message_tokens
from ttmemory.models import MemorySession, Message
from ttmemory.services.learning import session_summarise

pytestmark = pytest.mark.contract

_keys = itertools.count()


def tokens_of(messages: list[dict[str, Any]]) -> int:
    encoding = app_settings.TOKENIZER
    return sum(count_message_tokens(m, encoding=encoding) for m in messages)


def test_the_reported_window_of_170_tokens_for_a_budget_of_5_50_150_is_an_error_now(
    session: MemorySession, caplog: pytest.LogCaptureFixture
) -> None:
    messages = [
        {"role": "system", "content": "You are a travel agent. " * 8},
        user("Hi! I'm Ada. I'm allergic to peanuts and I prefer window seats. " * 3),
        assistant("Noted, Ada: no peanuts, and a window seat on every flight. " * 3),
    ]
    memory.message_add_many(session=session, messages=messages)
    required = tokens_of(messages)
    assert required > 150

    for budget in (5, 50, 150):
        with pytest.raises(memory.ContextBudgetError) as caught:
            memory.context_window(session=session, max_tokens=budget)
        assert (caught.value.required, caught.value.max_tokens) == (required, budget)
        assert caught.value.field == "max_tokens"  # a MemoryValidationError: the API says 400
        with pytest.raises(memory.ContextBudgetError):
            memory.prompt_build(session=session, max_tokens=budget)

        loose = memory.context_window_detailed(session=session, max_tokens=budget, strict=False)
        assert loose.messages == messages  # what must be kept: never [system, answer]
        assert (loose.tokens, loose.required, loose.overflow) == (
            required,
            required,
            required - budget,
        )
        with caplog.at_level(logging.WARNING, logger="ttmemory.selectors.sessions"):
            assert memory.context_window(session=session, max_tokens=budget, strict=False) == (
                messages
            )
        assert f"{required - budget} tokens over its budget of {budget}" in caplog.text
        prompt = memory.prompt_build(session=session, max_tokens=budget, strict=False)
        assert prompt.system == "" and prompt.window == messages
        assert prompt.overflow == required - budget

    fits = memory.context_window_detailed(session=session, max_tokens=required)
    assert (fits.messages, fits.overflow) == (messages, 0)


def test_the_summary_counts_and_is_part_of_what_must_be_kept(
    session: MemorySession, settings: Any
) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "SUMMARY_KEEP_TOKENS": 40}
    memory.message_add_many(
        session=session,
        messages=[user(f"point {i}: the sky is blue over Lisbon") for i in range(8)],
    )
    assert session_summarise(session_id=session.pk) is True
    full = memory.context_window_detailed(session=session, max_tokens=10_000)
    summary = full.messages[0]
    assert summary["role"] == "system" and summary["content"].startswith("Summary")
    assert full.tokens == tokens_of(full.messages)
    needed = tokens_of([summary, full.messages[-1]])
    assert memory.context_window_detailed(session=session, max_tokens=needed).messages == [
        summary,
        full.messages[-1],
    ]
    with pytest.raises(memory.ContextBudgetError) as caught:
        memory.context_window(session=session, max_tokens=needed - 1)
    assert caught.value.required == needed


@st.composite
def histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Chat histories a model and its tools produce: turns, tool groups (some results missing
    or late), system messages, assistant replies."""
    messages: list[dict[str, Any]] = []
    late: list[dict[str, Any]] = []
    calls = 0
    words = st.integers(0, 40)
    for kind in draw(
        st.lists(st.sampled_from(["system", "user", "user", "assistant", "tools"]), max_size=14)
    ):
        if kind == "tools":
            ids = [f"call_{calls + j}" for j in range(draw(st.integers(1, 3)))]
            calls += len(ids)
            messages.append(tool_call(ids))
            for call_id in draw(st.lists(st.sampled_from(ids), unique=True, max_size=len(ids))):
                result = tool_result(call_id, "r " * draw(words))
                (late if draw(st.integers(0, 4)) == 0 else messages).append(result)
            continue
        text = "w " * draw(words)
        if kind == "system":
            messages.append({"role": "system", "content": text})
        elif kind == "user":
            messages.append(user(text))
            messages.extend(late)
            late.clear()
        else:
            messages.append(assistant(text))
    return messages + late


def check_window(session: MemorySession, window: list[dict[str, Any]], max_tokens: int) -> None:
    """What every window must be: within budget, groups whole, no orphan answer first."""
    assert tokens_of(window) <= max_tokens
    stored = list(
        Message.objects.live().filter(session=session).order_by("seq").values_list("seq", "data")
    )
    # Tool groups whole: a call is followed by a result for each of its ids (stored or
    # "interrupted"), and every stored result of a call in the window is in the window.
    for index, message in enumerate(window):
        ids = [c["id"] for c in message.get("tool_calls") or []]
        if ids:
            following = window[index + 1 : index + 1 + len(ids)]
            assert sorted(m.get("tool_call_id") for m in following) == sorted(ids)
    others = [m for m in window if m["role"] not in ("system", "developer")]
    if not others or others[0]["role"] == "user":
        return
    # Not a user message first: no user message is older than it in the history, or it is a
    # call whose result arrived after a later user message (it travels with that result).
    first_seq = next(seq for seq, data in stored if data == others[0])
    older_users = [seq for seq, data in stored if data["role"] == "user" and seq < first_seq]
    if not older_users:
        return
    ids = {c["id"] for c in others[0].get("tool_calls") or []}
    result_seqs = [seq for seq, d in stored if d.get("tool_call_id") in ids and seq > first_seq]
    user_seqs = [seq for seq, d in stored if d["role"] == "user" and seq > first_seq]
    assert result_seqs and user_seqs and max(result_seqs) > min(user_seqs), window


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(messages=histories(), budgets=st.lists(st.integers(0, 400), min_size=1, max_size=4))
def test_every_window_and_prompt_holds_its_budget(
    db: Any, messages: list[dict[str, Any]], budgets: list[int]
) -> None:
    session = memory.session_open(namespace="user-budget", key=f"h{next(_keys)}")
    if messages:
        memory.message_add_many(session=session, messages=messages)
    for budget in budgets:
        try:
            detailed = memory.context_window_detailed(session=session, max_tokens=budget)
        except memory.ContextBudgetError as error:
            assert error.required > budget == error.max_tokens
            loose = memory.context_window_detailed(session=session, max_tokens=budget, strict=False)
            assert loose.tokens == loose.required == error.required
            assert loose.overflow == error.required - budget
            check_window(session, loose.messages, loose.tokens)
            with pytest.raises(memory.ContextBudgetError):
                memory.prompt_build(session=session, max_tokens=budget, memories=0)
            continue
        assert detailed.overflow == 0
        assert tokens_of(detailed.messages) <= detailed.tokens <= budget
        check_window(session, detailed.messages, budget)
        assert memory.context_window(session=session, max_tokens=budget) == detailed.messages
        prompt = memory.prompt_build(session=session, max_tokens=budget, memories=0)
        assert prompt.total <= budget and prompt.overflow == 0
        assert tokens_of(prompt.messages) <= budget


def test_a_prompt_drops_memories_before_what_the_window_must_keep(
    session: MemorySession,
) -> None:
    memory.fact_remember(namespace="user-1", text="Ada is allergic to peanuts " * 5)
    memory.fact_remember(namespace="user-1", text="Ada prefers window seats " * 5)
    memory.message_add_many(
        session=session, messages=[user("What about peanuts and window seats?")]
    )
    needed = tokens_of(memory.context_window(session=session, max_tokens=10_000))

    roomy = memory.prompt_build(session=session, max_tokens=needed + 200)
    assert "peanuts" in roomy.system and roomy.total <= needed + 200
    tight = memory.prompt_build(session=session, max_tokens=needed + 5)
    assert tight.window[-1]["content"].startswith("What about")
    assert tight.total <= needed + 5 and tokens_of(tight.messages) <= needed + 5
