"""The demo's front page links to the API clients' READMEs, and serves them."""

from __future__ import annotations

from typing import Any

from django.test import Client


def test_the_demo_serves_the_clients_readmes(db: Any) -> None:
    page = Client().get("/").content.decode()
    typescript = Client().get("/clients/typescript/")
    python = Client().get("/clients/python/")

    assert 'href="/clients/typescript/"' in page and 'href="/clients/python/"' in page
    assert typescript.status_code == 200 and "openapi-fetch" in typescript.content.decode()
    assert python.status_code == 200 and "ttmemory_client" in python.content.decode()
    assert Client().get("/clients/ruby/").status_code == 404
