"""Write throttle per caller (user or API key), rate from ``TTMEMORY["API_WRITE_RATE"]``."""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from ttmemory.conf import app_settings
from ttmemory.models import ApiKey


class WriteRateThrottle(SimpleRateThrottle):
    """Counts POST, PUT, PATCH and DELETE requests per caller; reads are not throttled."""

    scope = "ttmemory_write"

    def get_rate(self) -> str | None:
        rate: str | None = app_settings.API_WRITE_RATE
        return rate

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return None
        if isinstance(request.auth, ApiKey):
            ident = f"key-{request.auth.pk}"
        elif request.user and request.user.is_authenticated:
            ident = f"user-{request.user.pk}"
        else:
            ident = self.get_ident(request)
        return self.cache_format % {"scope": self.scope, "ident": ident}
