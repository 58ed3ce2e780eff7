"""Endpoints closed by default (issue 34): /metrics is a 404 until enabled, then answers only a
bearer token or an allowed network; webhook delivery refuses private, loopback, link-local and
metadata addresses, checked on the connected socket."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from ttmemory.telemetry import prometheus  # noqa: F401 (the view's module must import)


@pytest.fixture
def metrics(settings: Any) -> Any:
    def configure(**values: Any) -> None:
        settings.TTMEMORY = {**settings.TTMEMORY, **values}

    return configure


def test_metrics_are_not_served_unless_enabled(db: Any) -> None:
    response = Client().get("/metrics")
    assert response.status_code == 404
    assert b"ttmemory_" not in response.content


def test_enabled_metrics_need_the_token_or_an_allowed_network(db: Any, metrics: Any) -> None:
    metrics(METRICS_ENABLED=True)
    assert Client().get("/metrics").status_code == 403  # neither configured: closed
    metrics(METRICS_ENABLED=True, METRICS_TOKEN="s3cret-scrape")
    assert Client().get("/metrics").status_code == 403
    assert Client(HTTP_AUTHORIZATION="Bearer wrong").get("/metrics").status_code == 403
    ok = Client(HTTP_AUTHORIZATION="Bearer s3cret-scrape").get("/metrics")
    assert ok.status_code == 200 and ok["Content-Type"].startswith("text/plain")

    metrics(METRICS_ENABLED=True, METRICS_ALLOWED_NETWORKS=["10.1.0.0/16"])
    assert Client(REMOTE_ADDR="10.1.2.3").get("/metrics").status_code == 200
    assert Client(REMOTE_ADDR="10.2.0.1").get("/metrics").status_code == 403
    assert Client(REMOTE_ADDR="not-an-address").get("/metrics").status_code == 403


def test_a_malformed_network_is_a_configuration_error(metrics: Any) -> None:
    from ttmemory.conf import InvalidSetting, network_list

    with pytest.raises(InvalidSetting, match="not an IP network"):
        network_list(["10.0.0.0/33"])
