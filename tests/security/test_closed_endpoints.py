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


class _Receiver:
    """A loopback HTTP server counting the POSTs it gets."""

    def __init__(self) -> None:
        import http.server
        import threading

        hits: list[bytes] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                hits.append(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.hits = hits
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Any:
    server = _Receiver()
    yield server
    server.stop()


def _event() -> Any:
    from ttmemory.backends.events.base import Event

    return Event(
        type="message.added", namespace="ns", id="evt-1", occurred_at="2026-01-01T00:00:00+00:00"
    )


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_a_webhook_to_a_loopback_address_is_refused_and_never_sent(
    settings: Any, receiver: Any, host: str
) -> None:
    from ttmemory.backends.events.webhook import WebhookObserver

    observer = WebhookObserver(url=f"http://{host}:{receiver.port}/hook", secret="s")
    retryable, reason = observer.deliver(_event())
    observer.close()
    assert retryable is False and "webhook target refused" in reason and "loopback" in reason
    assert receiver.hits == []  # nothing reached the target: checked before the request

    settings.TTMEMORY = {**settings.TTMEMORY, "WEBHOOK_ALLOW_PRIVATE_TARGETS": True}
    allowed = WebhookObserver(url=f"http://{host}:{receiver.port}/hook", secret="s")
    assert allowed.deliver(_event()) == (None, "")
    allowed.close()
    assert len(receiver.hits) == 1


def test_a_name_that_rebinds_to_loopback_is_refused_on_the_connected_socket(
    receiver: Any, monkeypatch: Any
) -> None:
    """A name whose first answer (a check made beforehand) is public and whose next one, the
    connection's, is loopback: only a check of the connected socket catches it."""
    import socket

    from ttmemory.backends.events.webhook import WebhookObserver

    real = socket.getaddrinfo
    answers = iter(["93.184.215.14", "127.0.0.1", "127.0.0.1", "127.0.0.1"])

    def rebinding(host: str, *args: Any, **kwargs: Any) -> Any:
        if host == "rebind.example":
            return real(next(answers), *args, **kwargs)
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    assert socket.getaddrinfo("rebind.example", 80)[0][4][0] == "93.184.215.14"  # the "check"
    observer = WebhookObserver(url=f"http://rebind.example:{receiver.port}/hook", secret="s")
    retryable, reason = observer.deliver(_event())
    observer.close()
    assert retryable is False and "127.0.0.1 is loopback" in reason
    assert receiver.hits == []


@pytest.mark.parametrize(
    "address",
    ["10.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.169.254", "100.100.100.200", "::1",
     "fd00:ec2::254", "::ffff:127.0.0.1", "0.0.0.0", "224.0.0.1", "fe80::1"],
)  # fmt: skip
def test_private_link_local_and_metadata_addresses_are_refused(address: str) -> None:
    from ttmemory.backends.events.webhook import refused_address

    assert refused_address(address) is not None
    assert refused_address("93.184.215.14") is None and refused_address("2606:4700::1") is None
