"""The hot routes' faster JSON rendering and negotiation answer byte for byte as DRF's own."""

from __future__ import annotations

import datetime as dt
import json
import math
import random
import struct
from typing import Any

import pytest
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer
from rest_framework.test import APIRequestFactory
from rest_framework.utils.urls import replace_query_param

from tests.api.conftest import BASE, append, open_session
from ttmemory.api.renderers import FastContentNegotiation, FastJSONRenderer


class FiniteView:
    json_finite = True


def _floats(count: int) -> list[float]:
    """Floats of every spelling ``repr`` has: small, huge, exponents of both signs."""
    rng = random.Random(16)
    found: list[float] = [0.0, -0.0, 1e-05, 1e-07, 0.0001, 1.5e-300, 5e-324, 1e16, 1e22, 0.1]
    while len(found) < count:
        if rng.random() < 0.5:
            value = struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0]
        else:
            value = rng.random() * 10 ** rng.randint(-30, 30)
        if math.isfinite(value):
            found.append(value)
    return found


PAYLOADS: list[Any] = [
    {"results": [{"seq": 1, "message": {"role": "user", "content": "hi"}}], "next": None},
    {"text": "".join(chr(i) for i in range(0x800)) + "\U0001f600\u2028\u2029\ufeff"},
    {"floats": _floats(5000)},
    {"words": "a re-run of the one-time e-mail, 3e-5 and 0.00001 as text"},
    {"big": 2**64, "small": -(2**63)},
    {"keys": {1: "int key"}},
    {"when": dt.datetime(2026, 12, 1, 9, 1, 12, 123456, tzinfo=dt.UTC)},
    {"nested": [[[{"a": [True, False, None, 1, -1, 1.0, "x"]}]]]},
    [],
    "plain",
]


@pytest.mark.parametrize("payload", PAYLOADS, ids=range(len(PAYLOADS)))
@pytest.mark.parametrize("media_type", ["application/json", "application/json; indent=4"])
def test_the_bytes_are_drfs(payload: Any, media_type: str) -> None:
    context = {"view": FiniteView()}
    expected = JSONRenderer().render(payload, media_type, context)
    assert FastJSONRenderer().render(payload, media_type, context) == expected


def test_a_view_without_finite_answers_is_rendered_by_drf() -> None:
    # orjson would write NaN as null where DRF's strict JSON refuses it.
    with pytest.raises(ValueError):
        FastJSONRenderer().render({"x": math.nan}, "application/json", {"view": object()})


@pytest.mark.parametrize(
    ("accept", "query"),
    [
        (None, ""),
        ("*/*", ""),
        ("application/json", ""),
        ("text/html", ""),
        ("application/json; indent=4", ""),
        ("text/html, */*", ""),
        ("*/*", "?format=api"),
        (None, "?format=json"),
    ],
)
def test_negotiation_chooses_as_drf_does(accept: str | None, query: str) -> None:
    headers = {} if accept is None else {"HTTP_ACCEPT": accept}
    request = APIRequestFactory().get(f"/x/{query}", **headers)
    from rest_framework.request import Request

    drf_request = Request(request)
    renderers = [JSONRenderer(), BrowsableAPIRenderer()]
    renderer, media_type = DefaultContentNegotiation().select_renderer(drf_request, renderers)
    fast_renderer, fast_media_type = FastContentNegotiation().select_renderer(
        drf_request, renderers
    )
    assert (fast_renderer, fast_media_type) == (renderer, media_type)


def test_a_page_answers_what_drf_would_render(client_a: Any) -> None:
    session = open_session(client_a)
    content = {"ratio": 1e-07, "tiny": 0.00001, "line": "a\u2028b"}
    append(client_a, session["id"], {"role": "user", "content": "hi", "meta": content})
    response = client_a.get(f"{BASE}sessions/{session['id']}/messages/?limit=50")
    assert response.status_code == 200
    assert response.content == JSONRenderer().render(json.loads(response.content))
    assert response.json()["results"][0]["message"]["meta"] == content


@pytest.mark.parametrize(
    "query", ["limit=2", "limit=02", "archived=true&limit=2", "limit=2&before=9", "limit=2&x=%20"]
)
def test_the_next_page_link_is_drfs(client_a: Any, query: str) -> None:
    session = open_session(client_a)
    append(client_a, session["id"], *({"role": "user", "content": f"m{n}"} for n in range(5)))
    url = f"{BASE}sessions/{session['id']}/messages/?{query}"
    response = client_a.get(url)
    assert response.status_code == 200, response.content
    first = response.json()["results"][0]["seq"]
    expected = replace_query_param(f"http://testserver{url}", "before", first)
    assert response.json()["next"] == expected
