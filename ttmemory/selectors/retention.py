"""Retention reads: the lifetimes that apply to a namespace, legal holds, a session's expiry."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.db.models import OuterRef, QuerySet, Subquery

from ttmemory.conf import app_settings
from ttmemory.models import LegalHold, MemorySession, RetentionPolicy
from ttmemory.models.compiled import CompiledQuery


@dataclass(frozen=True, slots=True)
class Retention:
    """The lifetimes in force for one namespace (None: kept forever)."""

    namespace: str
    session_ttl: dt.timedelta | None
    session_expiry: str
    archived_message_ttl: dt.timedelta | None
    snapshot_ttl: dt.timedelta | None
    ledger_ttl: dt.timedelta | None
    audit_ttl: dt.timedelta | None
    overridden: tuple[str, ...]  # fields the namespace's policy sets


# RetentionPolicy fields that override a setting of the same name (upper-cased).
POLICY_LIFETIMES = ("session_ttl", "archived_message_ttl", "snapshot_ttl", "ledger_ttl")
# What a policy sets: its lifetimes and its session expiry ("" inherits the setting).
_OWN_FIELDS = (*POLICY_LIFETIMES, "session_expiry")


def lifetime(value: dt.timedelta | None, default: dt.timedelta | None) -> dt.timedelta | None:
    """A policy's lifetime over the setting's: NULL inherits, zero keeps forever."""
    if value is None:
        return default
    return value if value > dt.timedelta(0) else None


def retention_effective(*, namespace: str, policy: RetentionPolicy | None = None) -> Retention:
    """The lifetimes in force for ``namespace``: its ``RetentionPolicy`` over the settings.

    Pass ``policy`` when already read (None reads it; a namespace without one gets the
    settings).
    """
    if policy is None:
        policy = RetentionPolicy.objects.filter(namespace=namespace).first()
    if policy is None:
        return _retention(namespace, None)
    return _retention(namespace, {name: getattr(policy, name) for name in _OWN_FIELDS})


def _retention(namespace: str, own: dict[str, Any] | None) -> Retention:
    """``retention_effective`` from a policy's ``_OWN_FIELDS`` values (None: no policy)."""
    values = {name: getattr(app_settings, name.upper()) for name in POLICY_LIFETIMES}
    overridden: list[str] = []
    expiry = app_settings.SESSION_EXPIRY
    if own is not None:
        for name in POLICY_LIFETIMES:
            value = own[name]
            if value is not None:
                overridden.append(name)
            values[name] = lifetime(value, values[name])
        if own["session_expiry"]:
            overridden.append("session_expiry")
            expiry = own["session_expiry"]
    return Retention(
        namespace=namespace,
        session_expiry=expiry,
        audit_ttl=app_settings.AUDIT_TTL,
        overridden=tuple(overridden),
        **values,
    )


_POLICY_FIELDS = ("pk", *_OWN_FIELDS)


def _session_with_policy(key: object, *, namespace: str, session_id: int) -> QuerySet[Any]:
    policies = RetentionPolicy.objects.filter(namespace=OuterRef("namespace"))
    annotations = {f"policy_{name}": Subquery(policies.values(name)[:1]) for name in _POLICY_FIELDS}
    return MemorySession.objects.filter(namespace=namespace, pk=session_id).annotate(**annotations)


# Compiled once per connection: building and compiling these five subqueries was half of an
# API append's CPU (bench/api_profile.py).
_SESSION_WITH_POLICY = CompiledQuery(MemorySession, _session_with_policy)


def session_with_retention(
    *, namespace: str, session_id: int
) -> tuple[MemorySession, Retention] | None:
    """A session of ``namespace`` and the lifetimes in force for it, in one round trip (the
    namespace's policy read by subqueries beside the session row); None: no such session.

    For answers that render ``expires_at`` on a hot path (the API's append).
    """
    session = next(_SESSION_WITH_POLICY.objects(namespace=namespace, session_id=session_id), None)
    if session is None:
        return None
    # No policy row: every value NULL, which inherits every setting, as no policy does (the
    # values as the policy's fields hold them; no RetentionPolicy instance is built).
    own = {name: getattr(session, f"policy_{name}") for name in _OWN_FIELDS}
    return session, _retention(namespace, own)


def session_expires_at(
    *, session: MemorySession, retention: Retention | None = None
) -> dt.datetime | None:
    """When ``session`` expires if nothing touches it again: its last write plus SESSION_TTL.

    Derived from ``updated_at``, which every append, trim, clear, rollback and state update
    already writes, so the append path writes nothing more. None: kept forever (no lifetime,
    or an archive-mode session with no live message left to archive).
    """
    if retention is None:
        retention = retention_effective(namespace=session.namespace)
    if retention.session_ttl is None:
        return None
    if retention.session_expiry == "archive" and session.message_count == 0:
        return None
    return session.updated_at + retention.session_ttl


def legal_hold_find(*, namespace: str, session_id: int | None = None) -> LegalHold | None:
    """The hold covering ``namespace`` (or its session ``session_id``): the namespace's own
    first, then the session's; None when neither is held."""
    holds = LegalHold.objects.filter(namespace=namespace, session__isnull=True)
    found = holds.first()
    if found is None and session_id is not None:
        found = LegalHold.objects.filter(session_id=session_id).first()
    return found


def legal_holds(*, namespace: str) -> list[LegalHold]:
    """Every hold in ``namespace`` (on it and on its sessions), oldest first."""
    return list(LegalHold.objects.filter(namespace=namespace).order_by("placed_at", "pk"))
