"""Stemming from several threads at once (the index thread stems while requests do): each
thread gets the stems one thread alone gets."""

from __future__ import annotations

import itertools
import sys
import threading
from collections.abc import Iterator

import pytest

from ttmemory import text


@pytest.fixture
def busy_switching() -> Iterator[None]:
    """Threads switched every 10 microseconds, so a stemmer shared between them would be
    caught in the middle of a word (the default is 5 ms)."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(before)


@pytest.mark.parametrize("language", ["english", "russian", "german"])
def test_threads_stemming_at_once_get_the_stems_one_thread_gets(
    busy_switching: None, language: str
) -> None:
    roots = {
        "english": ["connect", "run", "generous", "nation", "hope", "cycl", "argu", "happi"],
        "russian": ["работ", "переезж", "аллерги", "собак", "город", "учител", "сестр"],
        "german": ["arbeit", "umzieh", "allergi", "hund", "stadt", "lehrer", "schwest"],
    }[language]
    endings = ["", "s", "ing", "ed", "ation", "ness", "ly", "ies", "ами", "ов", "ungen", "en"]
    words = [a + b + c for a, b, c in itertools.product(roots, endings, ["", "e", "er"])] * 12
    stem = text._stemmer(language)
    assert stem is not None
    alone = [stem(word) for word in words]
    results: list[list[str]] = [[] for _ in range(4)]
    errors: list[BaseException] = []

    def work(slot: int) -> None:
        try:
            results[slot] = [stem(word) for word in words]
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(slot,)) for slot in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors[0]
    assert all(result == alone for result in results)
