"""Content masking in the admin: what is hidden, and the audited, time-limited reveal.

With ``ADMIN_MASK_CONTENT`` on, message content, tool arguments and results, summaries, session
state, fact text and profile values are shown as "••• 42 characters". A staff member with
``ttmemory.reveal_content`` reveals one object (a session, with its snapshots; a fact, with its
chain; a profile) by giving a reason: an audit entry is written and the object's key is kept
in that staff member's Django session for ``ADMIN_REVEAL_SECONDS``. Nothing else is stored.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterable

from django.http import HttpRequest

from ttmemory.conf import app_settings

PERM_REVEAL = "ttmemory.reveal_content"
SESSION_KEY = "ttmemory_revealed"
MASK = "\u2022\u2022\u2022"


def reveal_seconds() -> int:
    """How long a reveal lasts in the staff member's session (``ADMIN_REVEAL_SECONDS``)."""
    return app_settings.ADMIN_REVEAL_SECONDS


def masking_enabled() -> bool:
    """Whether the console masks content (``TTMEMORY["ADMIN_MASK_CONTENT"]``)."""
    return app_settings.ADMIN_MASK_CONTENT


def can_reveal(request: HttpRequest) -> bool:
    return masking_enabled() and request.user.has_perm(PERM_REVEAL)


def _store(request: HttpRequest) -> dict[str, float]:
    now = time.time()
    raw = request.session.get(SESSION_KEY) or {}
    return {key: float(until) for key, until in raw.items() if float(until) > now}


def is_revealed(request: HttpRequest, object_type: str, object_id: object) -> bool:
    """True when content is not masked at all, or this object was revealed and still is."""
    if not masking_enabled():
        return True
    if not request.user.has_perm(PERM_REVEAL):
        return False
    return f"{object_type}:{object_id}" in _store(request)


def revealed_until(request: HttpRequest, object_type: str, object_id: object) -> dt.datetime | None:
    """When the reveal of this object ends, or None if it is not revealed."""
    until = _store(request).get(f"{object_type}:{object_id}")
    return dt.datetime.fromtimestamp(until, tz=dt.UTC) if until is not None else None


def remember_reveal(request: HttpRequest, object_type: str, object_ids: Iterable[object]) -> float:
    """Keep these objects revealed for ``ADMIN_REVEAL_SECONDS``; returns when that ends."""
    store = _store(request)
    until = time.time() + reveal_seconds()
    for object_id in object_ids:
        store[f"{object_type}:{object_id}"] = until
    request.session[SESSION_KEY] = store
    return until


def hide_again(request: HttpRequest, object_type: str, object_ids: Iterable[object]) -> None:
    """End the reveal of these objects now."""
    store = _store(request)
    for object_id in object_ids:
        store.pop(f"{object_type}:{object_id}", None)
    request.session[SESSION_KEY] = store


def mask(text: str) -> str:
    """What a masked text shows: its length only."""
    count = len(text)
    return f"{MASK} {count} character{'' if count == 1 else 's'}"


def shown(text: str, revealed: bool) -> str:
    return text if revealed else mask(text)
