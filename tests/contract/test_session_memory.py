"""Session memory contract: the same behaviour on every database (run once per database)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection

from tests.conftest import assistant, raw_rows, tool_call, tool_result, user
from ttmemory import memory
from ttmemory.exceptions import MemoryValidationError
from ttmemory.models import MemorySession, Message

pytestmark = pytest.mark.contract


def test_messages_come_back_in_the_order_they_were_added(session: MemorySession) -> None:
    memory.message_add(session=session, message=user("one"))
    memory.message_add_many(session=session, messages=[assistant("two"), user("three")])
    memory.message_add(session=session, message=assistant("four"))

    assert [m["content"] for m in memory.message_recent(session=session)] == [
        "one",
        "two",
        "three",
        "four",
    ]
    assert list(
        Message.objects.filter(session=session).order_by("seq").values_list("seq", flat=True)
    ) == [1, 2, 3, 4]


def test_a_capped_read_of_a_long_session_returns_the_newest_messages(
    session: MemorySession,
) -> None:
    memory.message_add_many(session=session, messages=[user(f"m{i}") for i in range(2500)])

    recent = memory.message_recent(session=session, limit=20)

    assert [m["content"] for m in recent] == [f"m{i}" for i in range(2480, 2500)]
    session.refresh_from_db()
    assert (session.message_count, session.last_seq) == (2500, 2500)


def test_context_window_keeps_system_messages_first_and_the_newest_turns(
    session: MemorySession,
) -> None:
    memory.message_add(session=session, message={"role": "system", "content": "Be brief."})
    memory.message_add_many(
        session=session, messages=[user(f"question {i} " + "x" * 200) for i in range(50)]
    )

    window = memory.context_window(session=session, max_tokens=300)

    assert window[0] == {"role": "system", "content": "Be brief."}
    assert window[-1]["content"].startswith("question 49 ")
    assert 1 < len(window) < 10
    assert all(m["role"] == "user" for m in window[1:])


def test_tool_calls_and_their_results_are_kept_or_dropped_together(session: MemorySession) -> None:
    memory.message_add(session=session, message=user("old " + "y" * 400))
    memory.message_add(session=session, message=user("Weather?"))
    memory.message_add(session=session, message=tool_call(["c1", "c2"]))
    memory.message_add(session=session, message=tool_result("c1", "first " + "z" * 300))
    memory.message_add(session=session, message=tool_result("c2", "second"))
    memory.message_add(session=session, message=assistant("done"))

    rows = dict(Message.objects.filter(session=session).values_list("seq", "group_seq"))
    assert rows == {1: 1, 2: 2, 3: 3, 4: 3, 5: 3, 6: 6}

    # A budget that fits the question and "done" but not the tool group drops the group whole
    # and keeps the question: the window never starts with an answer whose question was cut.
    window = memory.context_window(session=session, max_tokens=30)
    assert [m.get("content") for m in window] == ["Weather?", "done"]

    window = memory.context_window(session=session, max_tokens=250)
    assert [m["role"] for m in window] == ["user", "assistant", "tool", "tool", "assistant"]


def test_unicode_emoji_and_one_megabyte_round_trip_exactly(session: MemorySession) -> None:
    texts = [
        "Привет, мир! 你好，世界！ مرحبا",  # noqa: RUF001
        "emoji 👩‍👩‍👧‍👦🏳️‍🌈 and \u0000-free \t tabs",
        "é" * (1024 * 1024 // 2),  # 1 MB of two-byte characters
    ]
    message = {"role": "user", "content": texts[0], "name": "ada", "x_vendor": {"n": 1, "f": 1.5}}
    memory.message_add(session=session, message=message)
    for text in texts[1:]:
        memory.message_add(session=session, message=user(text))

    recent = memory.message_recent(session=session)
    assert recent[0] == message  # unknown keys kept, types exact
    assert [m["content"] for m in recent[1:]] == texts[1:]


def test_stored_columns_hold_no_plaintext(session: MemorySession) -> None:
    secret = "my passport number is X1234567"
    memory.message_add(session=session, message=user(secret))
    memory.message_add(session=session, message=tool_call(["call_secret"], name="lookup_passport"))

    table = connection.ops.quote_name(Message._meta.db_table)
    for (blob,) in raw_rows(f"SELECT data FROM {table}"):
        raw = bytes(blob)
        assert b"passport" not in raw
        assert b"X1234567" not in raw
        assert b"lookup_passport" not in raw


def test_concurrent_writers_lose_nothing_and_never_share_a_seq(transactional_db: Any) -> None:
    session = memory.session_open(namespace="user-race", key="chat")
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            for i in range(10):
                memory.message_add(session=session, message=user(f"w{n}-{i}"))
        except BaseException as exc:  # collected and re-raised in the main thread
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    seqs = sorted(Message.objects.filter(session=session).values_list("seq", flat=True))
    assert seqs == list(range(1, 161))
    session.refresh_from_db()
    assert (session.message_count, session.last_seq) == (160, 160)
    contents = {m["content"] for m in memory.message_recent(session=session)}
    assert contents == {f"w{n}-{i}" for n in range(16) for i in range(10)}


def test_batches_racing_single_appends_stay_whole_and_in_order(transactional_db: Any) -> None:
    # Batches (a tool call answered in the same batch) and single messages from 8 threads:
    # every batch lands as one run of consecutive seqs, its result grouped with its call.
    session = memory.session_open(namespace="user-race", key="batches")
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            for i in range(5):
                if n % 2:
                    memory.message_add(session=session, message=user(f"w{n}-{i}"))
                    continue
                call = f"c{n}-{i}"
                memory.message_add_many(
                    session=session,
                    messages=[
                        user(f"w{n}-{i}"),
                        tool_call([call]),
                        tool_result(call),
                        assistant("ok"),
                    ],
                )
        except BaseException as exc:  # collected and re-raised in the main thread
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    rows = list(
        Message.objects.filter(session=session)
        .order_by("seq")
        .values_list("seq", "role", "group_seq", "tool_call_id")
    )
    total = 4 * 5 * 4 + 4 * 5
    assert [seq for seq, *_ in rows] == list(range(1, total + 1))
    session.refresh_from_db()
    assert (session.message_count, session.last_seq) == (total, total)
    history = memory.message_recent(session=session)
    for index, message in enumerate(history):
        if message.get("tool_calls"):
            call_id = message["tool_calls"][0]["id"]
            assert history[index - 1]["content"] == "w" + call_id[1:]
            assert history[index + 1]["tool_call_id"] == call_id
            assert history[index + 2] == assistant("ok")
            seq, _, _, _ = rows[index]
            assert rows[index + 1][2] == seq  # the result is in its call's group


@pytest.mark.parametrize(
    ("message", "field"),
    [
        ({"role": "wizard", "content": "hi"}, "message.role"),
        ({"role": "tool", "content": "42"}, "message.tool_call_id"),
        ({"role": "user", "content": {1, 2}}, "message.content"),
        ({"role": "user", "content": float("nan")}, "message.content"),
        ("just a string", "message"),
    ],
)
def test_bad_messages_are_rejected_with_the_field_named_and_nothing_written(
    session: MemorySession, message: Any, field: str
) -> None:
    with pytest.raises(MemoryValidationError) as excinfo:
        memory.message_add(session=session, message=message)

    assert excinfo.value.field == field
    assert Message.objects.count() == 0
    session.refresh_from_db()
    assert (session.message_count, session.last_seq, session.token_count) == (0, 0, 0)


def test_a_message_over_the_size_limit_is_rejected(session: MemorySession, settings: Any) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "MAX_MESSAGE_BYTES": 1000}

    with pytest.raises(MemoryValidationError) as excinfo:
        memory.message_add(session=session, message=user("a" * 1001))

    assert excinfo.value.field == "message"
    assert "1000" in str(excinfo.value)
    assert Message.objects.count() == 0


def test_one_bad_message_in_a_batch_writes_none_of_the_batch(session: MemorySession) -> None:
    batch = [user("fine"), assistant("also fine"), {"role": "tool", "content": "no id"}]

    with pytest.raises(MemoryValidationError) as excinfo:
        memory.message_add_many(session=session, messages=batch)

    assert excinfo.value.field == "messages[2].tool_call_id"
    assert Message.objects.count() == 0


@pytest.mark.parametrize("namespace", ["", "   ", " padded", "a" * 256, 42, None])
def test_an_invalid_namespace_is_rejected_and_creates_nothing(db: Any, namespace: Any) -> None:
    with pytest.raises(MemoryValidationError) as excinfo:
        memory.session_open(namespace=namespace, key="k")

    assert excinfo.value.field == "namespace"
    assert MemorySession.objects.count() == 0


def test_every_read_during_concurrent_writes_is_a_prefix_of_the_final_history(
    transactional_db: Any,
) -> None:
    """After each append a writer waits for a read that started after it, so reads provably
    interleave with writes; every read must be a prefix of the final history, and each
    reader's reads must only grow."""
    session = memory.session_open(namespace="user-prefix", key="chat")
    observed: dict[int, list[list[str]]] = {0: [], 1: []}
    reads = threading.Condition()
    started = {"count": 0, "done": 0}  # reads started / finished, in order
    errors: list[BaseException] = []
    finished = threading.Event()

    def read_after_now() -> None:
        with reads:
            wanted = started["count"] + 1  # a read that starts after this point
            assert reads.wait_for(lambda: started["done"] >= wanted, timeout=30), "no reader"

    def writer(n: int) -> None:
        try:
            for i in range(15):
                memory.message_add(session=session, message=user(f"w{n}-{i}"))
                read_after_now()
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    def reader(r: int) -> None:
        try:
            while not finished.is_set():
                with reads:
                    started["count"] += 1
                    number = started["count"]
                read = [m["content"] for m in memory.message_recent(session=session)]
                observed[r].append(read)
                with reads:
                    started["done"] = max(started["done"], number)
                    reads.notify_all()
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    writers = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    readers = [threading.Thread(target=reader, args=(r,)) for r in range(2)]
    for thread in writers + readers:
        thread.start()
    for thread in writers:
        thread.join(120)
    finished.set()
    for thread in readers:
        thread.join(60)

    assert errors == []
    final = [m["content"] for m in memory.message_recent(session=session)]
    assert len(final) == 60
    every_read = observed[0] + observed[1]
    assert all(read == final[: len(read)] for read in every_read)
    for reads_of_one in observed.values():
        lengths = [len(read) for read in reads_of_one]
        assert lengths == sorted(lengths)  # a reader never sees history shrink
    partial = {len(read) for read in every_read if 0 < len(read) < 60}
    print(f"overlap: {len(partial)} distinct partial histories read during the writes")
    # Reads saw the history grow while it was written: one writer alone forces 14 (a read
    # between each of its appends, each holding one more of its messages than the last).
    assert len(partial) >= 14


def test_the_window_equals_packing_every_row_for_long_and_tangled_sessions(db: Any) -> None:
    """context_window reads only the newest rows it needs; the choice must not change."""
    import random

    from ttmemory import conversation
    from ttmemory.conf import app_settings
    from ttmemory.selectors.sessions import _window_rows as window_rows_of
    from ttmemory.selectors.sessions import pack_items

    rng = random.Random(7)
    for case in range(6):
        session = memory.session_open(namespace="user-window", key=f"case-{case}")
        messages: list[dict[str, Any]] = []
        pending: list[str] = []
        for i in range(rng.randint(300, 700)):
            roll = rng.random()
            if roll < 0.03:
                messages.append({"role": "system", "content": f"rule {i}"})
            elif roll < 0.15:
                ids = [f"c{case}-{i}-{k}" for k in range(rng.randint(1, 3))]
                messages.append(tool_call(ids))
                pending.extend(ids)
            elif roll < 0.3 and pending:  # results arrive late, out of order
                messages.append(
                    tool_result(pending.pop(rng.randrange(len(pending))), "r" * rng.randint(1, 400))
                )
            elif roll < (0.5 if case % 2 else 0.997):  # odd cases: long agent turns
                messages.append(assistant("a" * rng.randint(1, 300)))
            else:
                messages.append(user("x" * rng.randint(1, 300)))
        memory.message_add_many(session=session, messages=messages)
        rows = list(
            Message.objects.live()
            .filter(session=session)
            .values_list("seq", "role", "token_count", "group_seq", "tool_call_ids", "tool_call_id")
        )
        for budget in (0, 50, 400, 3000, 20000):
            encoding = app_settings.TOKENIZER
            everything = conversation.pack_detailed(
                pack_items(rows), max_tokens=budget, encoding=encoding
            )
            window_rows = window_rows_of(session, budget)
            assert (
                conversation.pack_detailed(
                    pack_items(window_rows), max_tokens=budget, encoding=encoding
                )
                == everything
            )
            window = memory.context_window_detailed(
                session=session, max_tokens=budget, strict=False
            )
            assert len(window.messages) >= 1
            assert window.tokens == everything.tokens
