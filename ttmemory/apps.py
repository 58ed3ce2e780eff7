"""App config: label, names, and the wiring of checks at start-up."""

from __future__ import annotations

from django.apps import AppConfig


class TTMemoryConfig(AppConfig):
    name = "ttmemory"
    label = "ttmemory"
    verbose_name = "Agent memory"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Configuration problems (a missing encryption key included) are system checks, which
        # stop runserver, migrate and check --deploy; ready() raises none of them.
        # Imported here, not at module level: they load models, which Django allows only once
        # the app registry is ready (the documented place for this wiring).
        from ttmemory import checks, fields, telemetry
        from ttmemory.models.ciphertext import legacy_format_accepted
        from ttmemory.models.holds import install_error_mapping

        checks.register()
        # A legal-hold trigger's refusal is a LegalHoldError, whichever code path hit it.
        install_error_mapping()
        # Every ttmemory log record carries the namespace and session id of its operation.
        telemetry.install_log_context()
        # Values from before row binding are readable only while their upgrade is pending.
        fields.set_legacy_format_policy(legacy_format_accepted)
        import ttmemory.services.background
        from ttmemory import routers

        # Read-your-writes must see writes made before the router is first asked anything.
        routers.watch_primary_writes()

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
