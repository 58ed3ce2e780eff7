"""Celery app of the demo project: ``celery -A demo_project worker``."""

import os

from celery import Celery
from celery.signals import worker_init, worker_process_shutdown

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "demo_project.settings")

app = Celery("demo_project")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_init.connect
def _serve_metrics(**kwargs: object) -> None:
    """/metrics of this worker (all its pool processes) on CELERY_METRICS_PORT, when set."""
    port = os.environ.get("CELERY_METRICS_PORT")
    if port:
        from prometheus_client import start_http_server

        from ttmemory.telemetry.prometheus import registry

        start_http_server(int(port), registry=registry())


@worker_process_shutdown.connect
def _forget_process(pid: int | None = None, **kwargs: object) -> None:
    # A pool process that exits takes its live gauges (the embedder breaker) with it.
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR") and pid:
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid)
