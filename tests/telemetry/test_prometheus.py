"""/metrics: the demo's view, a real gunicorn with two workers, the compose file, the dashboard."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import prometheus_client
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import user
from tests.demo_server import demo_env, free_port
from ttmemory import memory, telemetry
from ttmemory.services.access import api_key_create
from ttmemory.telemetry.prometheus import PrometheusMeterProvider, registry

ROOT = Path(__file__).resolve().parents[2]
NS = "prom-user"


def samples(text: str) -> list[Any]:
    return [s for family in text_string_to_metric_families(text) for s in family.samples]


def value(text: str, name: str, **labels: str) -> float:
    """Sum of the samples called ``name`` whose labels include ``labels``."""
    return sum(
        s.value
        for s in samples(text)
        if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
    )


def exported_names() -> set[str]:
    """Every series name ttmemory's instruments become in Prometheus."""
    names: set[str] = set()
    for spec in telemetry.METRICS.values():
        base = spec.prometheus_name
        if spec.kind == "histogram":
            names |= {f"{base}_bucket", f"{base}_count", f"{base}_sum"}
        else:
            names.add(base)
    return names


@pytest.fixture
def prometheus(settings: Any) -> Iterator[None]:
    settings.TTMEMORY = {**settings.TTMEMORY, "METRICS_ENABLED": True, "METRICS_TOKEN": "scrape"}
    telemetry.configure(meter_provider=PrometheusMeterProvider())
    yield
    telemetry.configure()


def test_metrics_view_shows_operations_recalls_and_locks(
    db: Any, client: Any, prometheus: None
) -> None:
    client.defaults["HTTP_AUTHORIZATION"] = "Bearer scrape"
    before = client.get("/metrics").content.decode()
    session = memory.session_open(namespace=NS, key="chat")
    memory.message_add(session=session, message=user("hello there"))
    memory.fact_remember(namespace=NS, text="The user likes tea")
    memory.fact_recall(namespace=NS, query="tea", k=3)

    response = client.get("/metrics")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    after = response.content.decode()

    def grew(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    count = "ttmemory_operation_duration_seconds_count"
    for operation in ("session_open", "message_add", "fact_remember", "fact_recall"):
        assert grew(count, ttmemory_operation=operation, error_type="") == 1, operation
    assert grew("ttmemory_recall_mode_total", ttmemory_recall_mode="hybrid") == 1
    assert grew("ttmemory_lock_wait_duration_seconds_count", ttmemory_lock_outcome="acquired") >= 1
    assert grew("gen_ai_client_operation_duration_seconds_count", ttmemory_purpose="embed") >= 2
    # The names the app exports are the ones MetricSpec.prometheus_name says.
    seen = {s.name for s in samples(after)}
    assert {
        "ttmemory_operation_duration_seconds_bucket",
        "ttmemory_recall_mode_total",
        "ttmemory_lock_wait_duration_seconds_sum",
    } <= seen & exported_names()


def test_the_host_projects_metrics_and_ttmemorys_stay_apart(
    db: Any, client: Any, prometheus: None
) -> None:
    host_orders = prometheus_client.Counter("host_orders", "The host project's own counter")
    try:
        host_orders.inc()
        memory.fact_recall(namespace=NS, query="tea", k=3)
        client.defaults["HTTP_AUTHORIZATION"] = "Bearer scrape"

        ours = client.get("/metrics").content.decode()
        hosts = prometheus_client.generate_latest().decode()  # the global REGISTRY

        assert value(ours, "ttmemory_recall_mode_total") >= 1
        assert "host_orders" not in ours
        assert value(hosts, "host_orders_total") == 1
        assert "ttmemory_" not in hosts
    finally:
        prometheus_client.REGISTRY.unregister(host_orders)


def test_multiprocess_scrapes_show_only_ttmemorys_metrics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another process (a worker of the host project) writes a host metric and a ttmemory one
    # to the shared directory; ttmemory's registry reads back its own only.
    script = (
        "import django; from django.conf import settings; settings.configure(); django.setup()\n"
        "import prometheus_client\n"
        "from ttmemory import telemetry\n"
        "from ttmemory.telemetry import prometheus\n"
        "prometheus_client.Counter('host_orders', 'The host project counter').inc()\n"
        "spec = telemetry.METRICS['ttmemory.recall.mode']\n"
        "prometheus._child(spec, {'ttmemory.recall.mode': 'hybrid'}).inc()\n"
    )
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, check=True, timeout=60)
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))

    text = prometheus_client.generate_latest(registry()).decode()

    assert value(text, "ttmemory_recall_mode_total", ttmemory_recall_mode="hybrid") == 1
    assert "host_orders" not in text


# PromQL: a name directly followed by a selector ({...}) or a range ([...]) is a metric.
METRIC_IN_EXPR = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\s*[{\[]")


def test_the_dashboard_parses_and_queries_only_exported_metrics() -> None:
    dashboard = json.loads((ROOT / "docs" / "grafana-dashboard.json").read_text())
    exprs = [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]
    assert len(dashboard["panels"]) >= 10 and all(exprs)
    queried = {name for expr in exprs for name in METRIC_IN_EXPR.findall(expr)}
    assert queried - exported_names() == set()
    labels = {a.replace(".", "_") for spec in telemetry.METRICS.values() for a in spec.attributes}
    for expr in exprs:
        assert METRIC_IN_EXPR.search(expr), expr
        for grouped in re.findall(r"by \(([^)]*)\)", expr):
            assert {g.strip() for g in grouped.split(",")} - {"le"} <= labels, expr
    titles = " ".join(panel["title"] for panel in dashboard["panels"]).lower()
    for needed in ("p50", "p99", "errors", "fallback", "queue lag", "spend per day"):
        assert needed in titles, needed


def test_the_compose_file_runs_prometheus_scraping_web_and_worker() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert {"web", "worker", "prometheus", "grafana"} <= set(services)
    for name in ("web", "worker"):
        env = services[name]["environment"]
        assert env["PROMETHEUS_MULTIPROC_DIR"] == "/tmp/prometheus"
        assert any(m.startswith("/tmp/prometheus") for m in services[name]["tmpfs"])
    assert services["worker"]["environment"]["CELERY_METRICS_PORT"] == "9808"
    mounted = [v.split(":")[0] for v in services["prometheus"]["volumes"]]
    scrape = yaml.safe_load((ROOT / mounted[0]).read_text())
    targets = {
        target
        for job in scrape["scrape_configs"]
        for config in job["static_configs"]
        for target in config["targets"]
    }
    assert targets == {"web:8000", "worker:9808"}
    grafana = [v.split(":")[0] for v in services["grafana"]["volumes"]]
    assert "./docs/grafana-dashboard.json" in grafana
    for path in grafana:
        assert (ROOT / path).exists(), path
    assert "gunicorn.conf.py" in (ROOT / "Dockerfile").read_text()


def get(url: str, headers: dict[str, str] | None = None, body: bytes | None = None) -> bytes:
    request = urllib.request.Request(url, data=body, headers=headers or {})
    with urllib.request.urlopen(request, timeout=30) as response:
        return bytes(response.read())


@pytest.mark.django_db(transaction=True)
def test_gunicorn_with_two_workers_sums_both_workers_metrics(tmp_path: Path) -> None:
    multiproc = tmp_path / "prometheus"
    multiproc.mkdir()
    _, raw_key = api_key_create(name="metrics", namespaces=[NS])
    port = free_port()
    env = demo_env(
        PROMETHEUS_MULTIPROC_DIR=str(multiproc),
        GUNICORN_BIND=f"127.0.0.1:{port}",
        GUNICORN_WORKERS="2",
        TTMEMORY_METRICS_ALLOWED_NETWORKS="127.0.0.0/8",
    )
    log = (tmp_path / "gunicorn.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "demo_project/gunicorn.conf.py"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                get(f"{base}/metrics")
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError((tmp_path / "gunicorn.log").read_text()[-3000:]) from None
                time.sleep(0.2)

        headers = {
            "Authorization": f"Api-Key {raw_key}",
            "X-Memory-Namespace": NS,
            "Content-Type": "application/json",
        }
        sent = 0
        # Requests from several threads at once keep both sync workers busy; repeat until the
        # directory shows both workers wrote samples (each file name carries its pid). The
        # second worker may still be importing Django when the first answers, so the rounds
        # go on for up to a minute rather than a fixed count.
        pids: set[str] = set()
        round_ = 0
        rounds_until = time.monotonic() + 60
        while time.monotonic() < rounds_until:
            round_ += 1
            url = f"{base}/api/memory/sessions/"
            bodies = [json.dumps({"key": f"r{round_}-t{n}"}).encode() for n in range(4)]
            threads = [threading.Thread(target=get, args=(url, headers, body)) for body in bodies]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(60)
            sent += 4
            pids = {p.stem.rsplit("_", 1)[-1] for p in multiproc.glob("histogram_*.db")}
            if len(pids) >= 2:
                break
        assert len(pids) == 2, pids

        # Any worker answers the scrape with the sum over both.
        for _ in range(3):
            text = get(f"{base}/metrics").decode()
            count = value(
                text, "ttmemory_operation_duration_seconds_count", ttmemory_operation="session_open"
            )
            assert count == sent
    finally:
        server.terminate()
        server.wait(30)
        log.close()
