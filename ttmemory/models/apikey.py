"""ApiKey: a service client's credential and the namespaces it may act on."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class ApiKeyQuerySet(models.QuerySet["ApiKey"]):
    def active(self) -> ApiKeyQuerySet:
        return self.filter(revoked_at__isnull=True)


class ApiKey(models.Model):
    """A key for service clients of the REST API.

    Only a keyed hash of the secret is stored (``secret_hash``); the key itself is shown once,
    when it is created (``api_key_create``). ``namespaces`` lists exact namespaces or patterns
    ending in ``*`` (``"acme/*"``); a key acts on nothing else. ``can_rollback`` and
    ``can_erase`` allow the two destructive operations.
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

    objects = ApiKeyQuerySet.as_manager()

    class Meta:
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    def grants(self, namespace: str) -> bool:
        """Whether this key may act on ``namespace``."""
        for pattern in self.namespaces or []:
            if not isinstance(pattern, str):
                continue
            if pattern.endswith("*"):
                if namespace.startswith(pattern[:-1]) and namespace != pattern[:-1]:
                    return True
            elif namespace == pattern:
                return True
        return False

    @property
    def single_namespace(self) -> str | None:
        """The namespace to use when a request names none: the only exact grant, if any."""
        grants = [p for p in self.namespaces or [] if isinstance(p, str)]
        if len(grants) == 1 and not grants[0].endswith("*"):
            return grants[0]
        return None
