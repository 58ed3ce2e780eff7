"""ApiKey: a service client's credential and the namespaces it may act on."""

from __future__ import annotations

import datetime

from django.db import models
from django.utils import timezone

from ttmemory.exceptions import MemoryValidationError
from ttmemory.validation import NAMESPACE_SEPARATORS, clean_namespace


class ApiKeyQuerySet(models.QuerySet["ApiKey"]):
    def active(self) -> ApiKeyQuerySet:
        """Keys neither revoked nor expired now."""
        return self.filter(revoked_at__isnull=True).exclude(expires_at__lte=timezone.now())


class ApiKey(models.Model):
    """A key for service clients of the REST API.

    Only a keyed hash of the secret is stored (``secret_hash``); the key itself is shown once,
    when it is created (``api_key_create``). ``namespaces`` lists exact namespaces or prefix
    grants, a namespace followed by a separator and ``*`` (``"acme/*"``, ``"user-1:*"``); a key
    acts on nothing else. ``can_rollback`` and ``can_erase`` allow the two destructive
    operations. A key is refused once revoked (``revoked_at``) or expired (``expires_at``).
    """

    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, unique=True, help_text="Public part of the key.")
    secret_hash = models.CharField(max_length=64)
    namespaces = models.JSONField(default=list, help_text="Granted namespaces; 'prefix*' allowed.")
    can_rollback = models.BooleanField(default=False)
    can_erase = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(
        null=True, blank=True, help_text="Refused from this moment on; empty: never expires."
    )

    objects = ApiKeyQuerySet.as_manager()

    class Meta:
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.is_active_at(timezone.now())

    def is_active_at(self, moment: datetime.datetime) -> bool:
        """Neither revoked nor expired at ``moment``."""
        return self.revoked_at is None and (self.expires_at is None or moment < self.expires_at)

    def grants(self, namespace: str) -> bool:
        """Whether this key may act on ``namespace`` (a valid namespace: ``clean_namespace``).

        A stored prefix grant that does not end at a separator (``user-1*``, from before
        separators were required) grants nothing: system check ``ttmemory.W020`` lists them.
        """
        try:
            clean_namespace(namespace)
        except MemoryValidationError:
            return False
        for pattern in self.namespaces or []:
            if not isinstance(pattern, str):
                continue
            if pattern.endswith("*"):
                prefix = pattern[:-1]
                if (
                    is_prefix_grant(pattern)
                    and namespace.startswith(prefix)
                    and len(namespace) > len(prefix)
                ):
                    return True
            elif namespace == pattern:
                return True
        return False

    @property
    def unsafe_grants(self) -> list[str]:
        """Stored prefix grants that do not end at a separator (they grant nothing)."""
        return [
            p
            for p in self.namespaces or []
            if isinstance(p, str) and p.endswith("*") and not is_prefix_grant(p)
        ]

    @property
    def single_namespace(self) -> str | None:
        """The namespace to use when a request names none: the only exact grant, if any."""
        grants = [p for p in self.namespaces or [] if isinstance(p, str)]
        if len(grants) == 1 and not grants[0].endswith("*"):
            return grants[0]
        return None


def is_prefix_grant(pattern: str) -> bool:
    """Whether ``pattern`` is a usable prefix grant: text ending at a separator, then ``*``."""
    return len(pattern) >= 3 and pattern[-1] == "*" and pattern[-2] in NAMESPACE_SEPARATORS
