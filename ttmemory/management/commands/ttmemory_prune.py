"""Delete what has expired: facts and profiles past ``expires_at``, old Idempotency-Key answers."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from ttmemory.services.facts import facts_prune_expired
from ttmemory.services.idempotency import idempotency_prune


class Command(BaseCommand):
    help = (
        "Delete facts and profiles past their expires_at, and Idempotency-Key answers older "
        "than TTMEMORY['API_IDEMPOTENCY_SECONDS']. The periodic Celery task "
        "ttmemory.prune_expired does the same; this runs it now, for cron or by hand."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        facts = facts_prune_expired()
        self.stdout.write(f"expired facts deleted: {facts}")
        records = idempotency_prune()
        self.stdout.write(f"idempotency answers deleted: {records}")
