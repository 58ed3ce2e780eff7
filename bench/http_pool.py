"""Recall with a remote embedder: ttmemory 0.1's urllib client (a new connection per request)
against the pooled httpx client, in the same run, on loopback.

The embedder is ``OpenAIEmbedder`` pointed at the strict fake OpenAI server of the tests
(``tests/fakes/openai_server.py``) answering in HTTP/1.1 with keep-alive, as real servers do.
"before" swaps the client's transport for the urllib one it had in 0.1 (same retries, same
validation); "after" is the shipped client. The two alternate in blocks so a busy machine
slows both alike.
"""

from __future__ import annotations

import os
import statistics
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from typing import Any

import httpx
from django.db import connection
from django.test.utils import override_settings
from django.utils import timezone

from tests.fakes.openai_server import FakeOpenAI
from ttmemory import selectors, services
from ttmemory.backends import embedders
from ttmemory.backends.embedders import OpenAIEmbedder
from ttmemory.backends.openai_http import OpenAIHTTPClient
from ttmemory.conf import app_settings
from ttmemory.jobs import ledger_calls
from ttmemory.longterm.embedding import reset_health
from ttmemory.models import Fact, LedgerEntry

MODEL = "text-embedding-3-small"
DIMENSIONS = 256
BLOCK = 25
QUERIES = [
    "where does the user live",
    "what food is the user allergic to",
    "which airline seat does she prefer",
    "what is the name of the cat",
    "when is the user's birthday",
    "what programming language does he use at work",
]
Progress = Callable[[str], None]


class UrllibHTTPClient(OpenAIHTTPClient):
    """The transport of ttmemory 0.1: ``urllib.request.urlopen``, one connection per request."""

    def _send(self, data: bytes, timeout: float) -> tuple[int, Any, bytes]:
        headers = self._headers()
        request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return int(response.status), response.headers, response.read()
        except urllib.error.HTTPError as exc:
            with exc:
                return int(exc.code), exc.headers, exc.read()
        except urllib.error.URLError as exc:
            raise httpx.ConnectError(str(exc.reason)) from None


def embedder(fake: FakeOpenAI, *, pooled: bool) -> OpenAIEmbedder:
    backend = OpenAIEmbedder(
        model=MODEL,
        dimensions=DIMENSIONS,
        send_dimensions=True,
        base_url=fake.base_url,
        api_key=fake.api_key,
    )
    if not pooled:
        http = backend.http
        http.__class__ = UrllibHTTPClient
    return backend


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def run(
    *, recalls: int = 300, facts: int = 200, progress: Progress = lambda m: None
) -> dict[str, Any]:
    """Both measurements: plain http and https (TLS, as every hosted vendor)."""
    results = [
        _run(recalls=recalls, facts=facts, tls=tls, progress=progress) for tls in (False, True)
    ]
    return {
        "environment": {
            "database": connection.vendor,
            "recalls": recalls,
            "facts": facts,
            "dimensions": DIMENSIONS,
            "when": timezone.now().strftime("%Y-%m-%d %H:%M UTC"),
        },
        "rows": [row for result in results for row in result],
    }


def _run(*, recalls: int, facts: int, tls: bool, progress: Progress) -> list[dict[str, Any]]:
    """Time ``recalls`` recalls (and as many bare embedding calls) per client."""
    namespace = f"bench-http-{uuid.uuid4().hex[:8]}"
    fake = FakeOpenAI(keep_alive=True, tls=tls).start()
    saved_ca = os.environ.get("SSL_CERT_FILE")
    if tls:  # both clients trust the fake's certificate (urllib and httpx read this variable)
        os.environ["SSL_CERT_FILE"] = fake.ca_file
    variants = {"urllib, a connection per request (0.1)": False, "httpx, pooled": True}
    backends = {name: embedder(fake, pooled=pooled) for name, pooled in variants.items()}
    recall_ms: dict[str, list[float]] = {name: [] for name in variants}
    embed_ms: dict[str, list[float]] = {name: [] for name in variants}
    peers: dict[str, set[tuple[str, int]]] = {name: set() for name in variants}
    options = {
        "model": MODEL,
        "dimensions": DIMENSIONS,
        "send_dimensions": True,
        "base_url": fake.base_url,
        "api_key": fake.api_key,
    }
    ttmemory = {
        **app_settings.user_settings,
        "EMBEDDER": {"BACKEND": "ttmemory.backends.embedders.OpenAIEmbedder", "OPTIONS": options},
        "RECALL_TOUCH_SECONDS": 3600.0,  # recall statistics and ledger rows: not in the timing
    }
    try:
        with override_settings(TTMEMORY=ttmemory):
            reset_health()
            progress(f"remembering {facts} facts through the fake server")
            for n in range(facts):
                services.fact_remember(
                    namespace=namespace,
                    text=f"Fact {n}: {QUERIES[n % len(QUERIES)]} is answered by item {n * 7}",
                )
            for backend in backends.values():  # warm: imports, first connection
                _use(backend)
                selectors.fact_recall(namespace=namespace, query=QUERIES[0])
            done = 0
            while done < recalls:
                for name, backend in backends.items():
                    _use(backend)
                    first = len(fake.requests)
                    for i in range(done, min(done + BLOCK, recalls)):
                        query = QUERIES[i % len(QUERIES)]
                        started = time.perf_counter()
                        result = selectors.fact_recall(namespace=namespace, query=query)
                        recall_ms[name].append((time.perf_counter() - started) * 1000)
                        assert result.mode == "hybrid", result.fallback_reason
                        started = time.perf_counter()
                        backend.embed([query])
                        embed_ms[name].append((time.perf_counter() - started) * 1000)
                    with fake._lock:
                        peers[name].update(r.peer for r in fake.requests[first:])
                done += BLOCK
                progress(f"{'https' if tls else 'http'}: {min(done, recalls)}/{recalls} recalls")
            connections = {name: len(found) for name, found in peers.items()}
    finally:
        if saved_ca is None:
            os.environ.pop("SSL_CERT_FILE", None)
        else:
            os.environ["SSL_CERT_FILE"] = saved_ca
        embedders.reset_embedder()
        for backend in backends.values():
            backend.close()
        fake.stop()
        ledger_calls._take()
        Fact.objects.filter(namespace=namespace).delete()
        LedgerEntry.objects.filter(namespace=namespace).delete()
        reset_health()
    rows = []
    for name in variants:
        rows.append(
            {
                "scheme": "https" if tls else "http",
                "client": name,
                "connections": connections[name],
                "recall_p50_ms": round(statistics.median(recall_ms[name]), 2),
                "recall_p95_ms": round(percentile(recall_ms[name], 0.95), 2),
                "embed_p50_ms": round(statistics.median(embed_ms[name]), 2),
                "embed_p95_ms": round(percentile(embed_ms[name], 0.95), 2),
            }
        )
    return rows


def _use(backend: OpenAIEmbedder) -> None:
    """Make ``backend`` the process's embedder (what ``get_embedder()`` returns)."""
    with embedders._guard:
        embedders._embedder = backend
