"""ttmemory_prune deletes expired facts and old Idempotency-Key answers, and nothing else."""

from __future__ import annotations

import io
from datetime import timedelta
from typing import Any

from django.core.management import call_command
from django.utils import timezone

from ttmemory import memory
from ttmemory.models import Fact

NS = "user-prune"


def test_prune_deletes_only_what_expired(db: Any) -> None:
    past = timezone.now() - timedelta(minutes=1)
    future = timezone.now() + timedelta(days=1)
    gone = memory.fact_remember(namespace=NS, text="Ada is in Lisbon this week", expires_at=past)
    kept = memory.fact_remember(namespace=NS, text="Ada is in Porto next week", expires_at=future)
    forever = memory.fact_remember(namespace=NS, text="Ada is allergic to peanuts")
    out = io.StringIO()

    call_command("ttmemory_prune", stdout=out)

    assert "expired facts deleted: 1" in out.getvalue()
    assert set(Fact.objects.filter(namespace=NS).values_list("pk", flat=True)) == {
        kept.pk,
        forever.pk,
    }
    assert not Fact.objects.filter(pk=gone.pk).exists()
