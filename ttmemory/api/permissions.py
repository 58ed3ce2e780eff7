"""Permissions: a namespace for every request, and guards on rollback and erase."""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from ttmemory.api.namespaces import resolve_namespace
from ttmemory.models import ApiKey


class HasNamespace(BasePermission):
    """Authenticated, and the caller's namespace resolved (stored on ``request.namespace``)."""

    def has_permission(self, request: Request, view: Any) -> bool:
        if not (request.user and request.user.is_authenticated):
            return False
        request.namespace = resolve_namespace(request)  # type: ignore[attr-defined]
        return True


class _Guard(BasePermission):
    key_flag = ""
    perm = ""

    def has_permission(self, request: Request, view: Any) -> bool:
        if isinstance(request.auth, ApiKey):
            return bool(getattr(request.auth, self.key_flag))
        return bool(request.user and request.user.has_perm(self.perm))


class CanRollback(_Guard):
    """Rollback and undo: API keys with ``can_rollback``; users with
    ``ttmemory.rollback_memorysession``."""

    message = "Rolling back needs the ttmemory.rollback_memorysession permission."
    key_flag = "can_rollback"
    perm = "ttmemory.rollback_memorysession"


class CanErase(_Guard):
    """Erasing a namespace: API keys with ``can_erase``; users with ``ttmemory.erase_namespace``."""

    message = "Erasing needs the ttmemory.erase_namespace permission."
    key_flag = "can_erase"
    perm = "ttmemory.erase_namespace"


class CanRollbackToWrite(CanRollback):
    """Reads (a preview) for every caller of the namespace; writes as ``CanRollback``."""

    def has_permission(self, request: Request, view: Any) -> bool:
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return True
        return super().has_permission(request, view)


class CanManageRetention(_Guard):
    """Changing the namespace's retention policy or placing a legal hold: API keys with
    ``can_erase`` (they may already delete everything); users with
    ``ttmemory.change_retentionpolicy``."""

    message = "Changing retention needs the ttmemory.change_retentionpolicy permission."
    key_flag = "can_erase"
    perm = "ttmemory.change_retentionpolicy"


class CanLiftHold(BasePermission):
    """Lifting a legal hold: users with ``ttmemory.delete_legalhold`` only, never an API key
    (the party whose data is held must not be able to release it)."""

    message = "Lifting a legal hold needs the ttmemory.delete_legalhold permission (no API key)."

    def has_permission(self, request: Request, view: Any) -> bool:
        if isinstance(request.auth, ApiKey):
            return False
        return bool(request.user and request.user.has_perm("ttmemory.delete_legalhold"))
