"""Errors as HTTP answers: 400 naming the field, 404 for anything outside the namespace,
413 for a body over the limit, 503 with Retry-After when the database is unavailable."""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import ObjectDoesNotExist, RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import Http404
from rest_framework import status
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import exception_handler, set_rollback

from ttmemory.exceptions import (
    DecryptionError,
    LegalHoldError,
    LockTimeout,
    MemoryValidationError,
    SnapshotIntegrityError,
)
from ttmemory.services.idempotency import IdempotencyKeyReusedError

logger = logging.getLogger(__name__)
# Seconds a client should wait before retrying after the database was unavailable.
DATABASE_RETRY_AFTER = 5


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's handler, plus ttmemory's own errors.

    MemoryValidationError -> 400 ``{field: [message]}``; DoesNotExist and Http404 -> 404
    ``{"detail": "Not found."}``; a reused
    Idempotency-Key -> 422; a deletion refused by a legal hold -> 423 naming the hold;
    LockTimeout -> 503 with ``Retry-After`` (the write was not made
    and can be retried); a snapshot failing its integrity check -> 409; a stored value failing
    authentication (wrong key, tampered, or moved from another row) -> 500 JSON that names
    nothing of the row (the reason is logged); a body Django refused as too large -> 413; the
    database unavailable (``OperationalError``: connection lost, deadlock, serialisation
    failure, "database is locked"; ``InterfaceError``: connection closed) -> 503 with
    ``Retry-After`` (the request's transaction, if any, is rolled back; the error is logged).
    """
    if isinstance(exc, MemoryValidationError):
        return Response({exc.field: [exc.message]}, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, ObjectDoesNotExist | Http404):
        # One body for every 404: DRF would pass on get_object_or_404's "No MemorySession
        # matches the given query.", which names what was looked for.
        exc = NotFound()
    if isinstance(exc, IdempotencyKeyReusedError):
        return Response(
            {"Idempotency-Key": [str(exc)]}, status=status.HTTP_422_UNPROCESSABLE_ENTITY
        )
    if isinstance(exc, LockTimeout):
        return Response(
            {"detail": str(exc)},
            status=status.HTTP_503_SERVICE_UNAVAILABLE,
            headers={"Retry-After": "1"},
        )
    if isinstance(exc, LegalHoldError):
        # 423 Locked: the data is held; nothing was deleted. The hold is named, no content.
        return Response(
            {
                "detail": str(exc),
                "hold": {
                    "namespace": exc.namespace,
                    "session": exc.session_id,
                    "reason": exc.reason,
                },
            },
            status=status.HTTP_423_LOCKED,
        )
    if isinstance(exc, SnapshotIntegrityError):
        return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
    if isinstance(exc, DecryptionError):
        logger.error("a stored value could not be decrypted: %s", exc)
        return Response(
            {"detail": "A stored value failed authentication and was not returned."},
            status=status.HTTP_500_INTERNAL_SERVER_ERROR,
        )
    if isinstance(exc, RequestDataTooBig):
        return Response(
            {"detail": "Request body too large."},
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    if isinstance(exc, OperationalError | InterfaceError):
        logger.error("database unavailable during an API request", exc_info=exc)
        set_rollback()
        return Response(
            {"detail": "The database is unavailable; retry later (with the same Idempotency-Key)."},
            status=status.HTTP_503_SERVICE_UNAVAILABLE,
            headers={"Retry-After": str(DATABASE_RETRY_AFTER)},
        )
    return exception_handler(exc, context)
