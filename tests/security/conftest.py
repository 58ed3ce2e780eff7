"""Security fixtures: the API's two users and their clients, the admin's staff members."""

from __future__ import annotations

from tests.admin.conftest import fast_passwords, staff_client
from tests.api.conftest import alice, bob, client_a, client_b

__all__ = ["alice", "bob", "client_a", "client_b", "fast_passwords", "staff_client"]
