"""Demo Django project using ttmemory; also the settings base of the test suite."""

from demo_project.celery import app as celery_app

__all__ = ["celery_app"]
