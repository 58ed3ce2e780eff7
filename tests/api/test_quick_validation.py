"""The hot routes' quick validation answers exactly as their serializers do, or defers to them."""

from __future__ import annotations

from typing import Any

import pytest
from django.http import QueryDict

from ttmemory.api.base import valid_data
from ttmemory.api.serializers import MessageAppendSerializer, MessagePageQuerySerializer

MESSAGE = {"role": "user", "content": "hi", "name": None, "extra": {"a": [1, 2]}}
BODIES: list[Any] = [
    {"message": MESSAGE},
    {"message": {}},
    {"messages": [MESSAGE, {"role": "assistant", "content": None}]},
    {"messages": []},
    {"messages": [MESSAGE, "no"]},
    {"message": MESSAGE, "messages": [MESSAGE]},
    {"message": MESSAGE, "other": 1},
    {"message": "text"},
    {"message": None},
    {"messages": MESSAGE},
    {},
    [MESSAGE],
    "message",
]
QUERIES = [
    "",
    "limit=50",
    "limit=1",
    "limit=1000",
    "limit=0050",
    "limit=0",
    "limit=1001",
    "limit=99999",
    "limit=-1",
    "limit=5.0",
    "limit= 5",
    "limit=%D9%A3",  # an Arabic-Indic digit
    "limit=",
    "limit=1&limit=2",
    "limit=5&before=3",
    "archived=true",
    "before=10",
    "unknown=1",
]


def serializer_answer(serializer_class: Any, data: Any) -> Any:
    serializer = serializer_class(data=data)
    if serializer.is_valid():
        return dict(serializer.validated_data)
    return ("invalid", serializer.errors)


@pytest.mark.parametrize("body", BODIES, ids=range(len(BODIES)))
def test_append_bodies(body: Any) -> None:
    quick = MessageAppendSerializer.quick(body)
    expected = serializer_answer(MessageAppendSerializer, body)
    assert quick is None or quick == expected


@pytest.mark.parametrize("query", QUERIES)
def test_page_queries(query: str) -> None:
    data = QueryDict(query)
    quick = MessagePageQuerySerializer.quick(data)
    expected = serializer_answer(MessagePageQuerySerializer, data)
    assert quick is None or quick == expected
    if not isinstance(expected, tuple):
        assert valid_data(MessagePageQuerySerializer, data) == expected


def test_the_common_inputs_take_the_quick_path() -> None:
    assert MessageAppendSerializer.quick({"message": MESSAGE}) == {"message": MESSAGE}
    assert MessagePageQuerySerializer.quick(QueryDict("limit=50")) == {
        "limit": 50,
        "archived": False,
    }
