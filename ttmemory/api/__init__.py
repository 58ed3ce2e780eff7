"""The REST API (the only package importing DRF): mount ``ttmemory.api.urls`` in a project."""
