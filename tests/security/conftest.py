"""Security fixtures: the API's two users and their clients."""

from __future__ import annotations

from tests.api.conftest import alice, bob, client_a, client_b

__all__ = ["alice", "bob", "client_a", "client_b"]
