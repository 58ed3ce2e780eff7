"""Integrations: wire formats and agent frameworks on top of the public API."""
