"""Errors as HTTP answers, all in one shape: RFC 9457 problem details
(``application/problem+json``). 400 names the field, 404 for anything outside the namespace,
413 for a body over the limit, 503 with Retry-After when the database is unavailable."""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

from django.core.exceptions import ObjectDoesNotExist, RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpResponse, JsonResponse
from rest_framework import status
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import exception_handler, set_rollback

from ttmemory.exceptions import (
    DecryptionError,
    HistoryPointError,
    LegalHoldError,
    LockTimeout,
    MemoryValidationError,
    SnapshotIntegrityError,
)
from ttmemory.services.idempotency import IdempotencyKeyReusedError

logger = logging.getLogger(__name__)
# Seconds a client should wait before retrying after the database was unavailable.
DATABASE_RETRY_AFTER = 5
PROBLEM_CONTENT_TYPE = "application/problem+json"


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's handler, plus ttmemory's own errors; ``as_problem`` (run by every ttmemory view on
    every error answer, raised or returned) then renders the body as problem details.

    HistoryPointError (a rewind or fork point that is not a live message, or inside a tool
    group) -> 409 with the extension member ``group``; MemoryValidationError -> 400
    ``{field: [message]}``; DoesNotExist and Http404 -> 404 ``{"detail": "Not found."}``; a
    reused Idempotency-Key -> 422; a deletion refused by a legal hold -> 423 naming the hold;
    LockTimeout -> 503 with ``Retry-After`` (the write was not made
    and can be retried); a snapshot failing its integrity check -> 409; a stored value failing
    authentication (wrong key, tampered, or moved from another row) -> 500 JSON that names
    nothing of the row (the reason is logged); a body Django refused as too large -> 413; the
    database unavailable (``OperationalError``: connection lost, deadlock, serialisation
    failure, "database is locked"; ``InterfaceError``: connection closed) -> 503 with
    ``Retry-After`` (the request's transaction, if any, is rolled back; the error is logged).
    """
    if isinstance(exc, HistoryPointError):
        # A point in the history that is not (or no longer) one: a conflict with the
        # session's state, not a malformed request.
        # ``group`` is an extension member of the problem (RFC 9457 section 3.2).
        group = list(exc.group) if exc.group else None
        body = problem(status.HTTP_409_CONFLICT, {"detail": str(exc)}) | {"group": group}
        return Response(body, status=status.HTTP_409_CONFLICT)
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
        hold = {"namespace": exc.namespace, "session": exc.session_id, "reason": exc.reason}
        body = problem(status.HTTP_423_LOCKED, {"detail": str(exc)}) | {"hold": hold}
        return Response(body, status=status.HTTP_423_LOCKED)
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


def problem(status_code: int, data: Any) -> dict[str, Any]:
    """The RFC 9457 body for an error answer whose DRF-style body is ``data``.

    ``{"detail": "..."}`` keeps its detail; a field map (``{"messages[1].role": ["..."]}``,
    nested serializer errors included) becomes ``errors``, flattened to the paths the
    services name (``source.session``, ``messages[1].role``), with ``detail`` naming the
    first. ``type`` is ``about:blank`` (the status says what happened), ``title`` the status
    phrase.
    """
    if isinstance(data, dict) and {"type", "title", "status", "detail"} <= data.keys():
        return data  # already a problem
    title = _title(status_code)
    body: dict[str, Any] = {"type": "about:blank", "title": title, "status": status_code}
    if isinstance(data, dict) and set(data) == {"detail"}:
        body["detail"] = str(data["detail"])
        return body
    errors: dict[str, list[str]] = {}
    _flatten(data, "", errors)
    general = errors.pop("", [])
    if errors:
        body["errors"] = errors
        field, messages = next(iter(errors.items()))
        first = f"{field}: {messages[0]}" if messages else field
        general = general or [first if len(errors) == 1 else f"{len(errors)} fields: {first}"]
    body["detail"] = "; ".join(general) or title
    return body


def as_problem(response: Any) -> Any:
    """Rewrite an error answer of a DRF view (raised or returned) as problem details; the
    status and headers (``Retry-After``, ``WWW-Authenticate``) stay."""
    if response.status_code < 400:
        return response
    response.data = problem(response.status_code, response.data)
    renderer = getattr(response, "accepted_renderer", None)
    if renderer is None or renderer.format == "json":
        response.content_type = PROBLEM_CONTENT_TYPE
    return response


def problem_response(status_code: int, detail: str) -> HttpResponse:
    """A problem answer from a plain Django view (the mount's catch-all 404)."""
    return JsonResponse(
        problem(status_code, {"detail": detail}),
        status=status_code,
        content_type=PROBLEM_CONTENT_TYPE,
    )


def _title(status_code: int) -> str:
    try:
        return HTTPStatus(status_code).phrase
    except ValueError:
        return "Error"


def _flatten(value: Any, path: str, into: dict[str, list[str]]) -> None:
    """Collect DRF's (possibly nested) error detail into ``{"a.b[2].c": [messages]}``;
    messages with no field (``non_field_errors``, a bare list) go under ``""``."""
    if value is None:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            name = "" if key == "non_field_errors" else str(key)
            _flatten(item, f"{path}.{name}" if path and name else path or name, into)
    elif isinstance(value, list | tuple) and any(isinstance(item, dict | list) for item in value):
        for index, item in enumerate(value):
            if item:  # DRF lists an empty dict for each valid item of a many=True field
                _flatten(item, f"{path}[{index}]", into)
    elif isinstance(value, list | tuple):
        into.setdefault(path, []).extend(str(item) for item in value)
    else:
        into.setdefault(path, []).append(str(value))
