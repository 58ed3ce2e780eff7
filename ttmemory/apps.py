"""App config: label, names, and the wiring of checks at start-up."""

from __future__ import annotations

from django.apps import AppConfig


class TTMemoryConfig(AppConfig):
    name = "ttmemory"
    label = "ttmemory"
    verbose_name = "Agent memory"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.conf import settings
        from django.core.exceptions import ImproperlyConfigured

        from ttmemory import checks
        from ttmemory.conf import app_settings

        checks.register()
        import ttmemory.services.background

        try:  # Celery is optional: with it, background jobs become Celery tasks
            import celery  # noqa: F401
        except ImportError:
            pass
        else:
            import ttmemory.tasks
        try:  # the API's OpenAPI extensions, when drf-spectacular is installed
            import drf_spectacular  # noqa: F401
        except ImportError:
            pass
        else:
            import ttmemory.api.schema  # noqa: F401
        if not settings.DEBUG and not app_settings.ENCRYPTION_KEYS:
            # Production refuses to start rather than run without encryption at rest.
            raise ImproperlyConfigured(f"ttmemory: {checks.KEY_HINT}")
