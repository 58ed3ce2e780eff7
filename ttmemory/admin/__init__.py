"""The Django admin console for support staff: conversations, safe rollback, facts, audit log.

Importing this package registers the ModelAdmins (Django's admin autodiscovery does it).
See docs/admin.md for the guide and the permissions to grant.
"""

from ttmemory.admin import facts, records, retention, sessions, snapshots

__all__ = ["facts", "records", "retention", "sessions", "snapshots"]
