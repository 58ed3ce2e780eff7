"""Celery app of the demo project: ``celery -A demo_project worker``."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "demo_project.settings")

app = Celery("demo_project")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
