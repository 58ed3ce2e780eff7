"""Bridges to the world outside Django: wire formats of model vendors, later agent frameworks."""
