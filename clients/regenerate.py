"""Regenerate the schema snapshot and both clients from what the code serves: ``./dev clients``.

1. Serve the OpenAPI document (``tests.settings``, SQLite, no server) and compare it with the
   snapshot ``clients/openapi.json``. A breaking change (``clients/compat.py``) that is not
   listed in ``clients/breaking-changes.txt`` stops here, naming the lines to add there (and
   to CHANGELOG.md) if it is meant.
2. Write the snapshot.
3. TypeScript: ``openapi-typescript`` writes ``clients/typescript/src/schema.d.ts``
   (``npm ci`` first when ``node_modules`` is missing).
4. Python: ``openapi-python-client`` (pinned in requirements-dev.txt) rewrites
   ``clients/python/ttmemory-client/`` from the snapshot.

``--check`` writes nothing and exits 1 when a checked-in client differs from what the
generators make of the snapshot.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

CLIENTS = Path(__file__).resolve().parent
ROOT = CLIENTS.parent
TYPESCRIPT = CLIENTS / "typescript"
PYTHON = CLIENTS / "python" / "ttmemory-client"  # generated; README and example beside it
PYTHON_CONFIG = CLIENTS / "python-client.yaml"
sys.path.insert(0, str(ROOT))

from clients.compat import SNAPSHOT, breaking_changes, dump, unacknowledged  # noqa: E402


def served_schema() -> dict[str, Any]:
    """The document ``GET <mount>/schema/?format=json`` answers, with ``tests.settings``."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{ROOT / '.data' / 'clients.sqlite3'}")
    import django
    from django.test import Client
    from django.urls import reverse

    django.setup()
    response = Client().get(reverse("ttmemory-api:schema"), {"format": "json"})
    assert response.status_code == 200, response.content
    return dict(json.loads(response.content))


def npm_ci() -> None:
    """``npm ci`` in clients/typescript when its node_modules is missing (cached there)."""
    if not (TYPESCRIPT / "node_modules" / ".package-lock.json").exists():
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=TYPESCRIPT,
            check=True,
        )


def typescript_types(snapshot: Path, output: Path) -> None:
    npm_ci()
    cli = TYPESCRIPT / "node_modules" / "openapi-typescript" / "bin" / "cli.js"
    subprocess.run(
        ["node", str(cli), str(snapshot), "--output", str(output), "--silent"],
        cwd=TYPESCRIPT,
        check=True,
    )


def python_client(snapshot: Path, output: Path) -> None:
    generator = Path(sys.executable).with_name("openapi-python-client")
    env = {**os.environ, "PATH": f"{generator.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    subprocess.run(
        [
            str(generator),
            "generate",
            "--path",
            str(snapshot),
            "--output-path",
            str(output),
            "--config",
            str(PYTHON_CONFIG),
            "--meta",
            "uv",
            "--overwrite",
        ],
        cwd=CLIENTS,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )


def out_of_date() -> list[str]:
    """The checked-in client files that differ from what the generators make of the snapshot
    (the snapshot against the code is tests/api/test_schema_compat.py's business)."""
    stale = []
    with tempfile.TemporaryDirectory() as tmp:
        snapshot = Path(tmp) / "openapi.json"
        shutil.copyfile(SNAPSHOT, snapshot)
        types = Path(tmp) / "schema.d.ts"
        typescript_types(snapshot, types)
        if not filecmp.cmp(types, TYPESCRIPT / "src" / "schema.d.ts", shallow=False):
            stale.append("clients/typescript/src/schema.d.ts")
        python_client(snapshot, Path(tmp) / "python")
        stale += [
            f"clients/python/ttmemory-client/{name}"
            for name in _tree_diff(Path(tmp) / "python", PYTHON)
        ]
    return stale


def _tree_diff(a: Path, b: Path) -> list[str]:
    files_a = {p.relative_to(a) for p in a.rglob("*") if p.is_file() and _generated(p)}
    files_b = {p.relative_to(b) for p in b.rglob("*") if p.is_file() and _generated(p)}
    differ = files_a ^ files_b
    differ |= {p for p in files_a & files_b if not filecmp.cmp(a / p, b / p, shallow=False)}
    return sorted(str(p) for p in differ)


def _generated(path: Path) -> bool:
    return not {"__pycache__", ".ruff_cache"} & set(path.parts) and path.suffix != ".pyc"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; 1 if out of date")
    args = parser.parse_args()
    if args.check:
        stale = out_of_date()
        for name in stale:
            print(f"out of date: {name} (run ./dev clients)")
        return 1 if stale else 0
    document = served_schema()
    if SNAPSHOT.exists():
        old = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
        refused = unacknowledged(breaking_changes(old, document))
        if refused:
            print("Breaking changes against clients/openapi.json, not acknowledged:")
            print("\n".join(f"  {change}" for change in refused))
            print(
                "If they are meant, add these lines to clients/breaking-changes.txt, name them "
                "in CHANGELOG.md (with the migration path for clients) and run this again."
            )
            return 1
    SNAPSHOT.write_text(dump(document), encoding="utf-8")
    typescript_types(SNAPSHOT, TYPESCRIPT / "src" / "schema.d.ts")
    python_client(SNAPSHOT, PYTHON)
    shutil.rmtree(PYTHON / ".ruff_cache", ignore_errors=True)
    print(
        f"wrote {SNAPSHOT.relative_to(ROOT)}, clients/typescript/src/schema.d.ts, "
        "clients/python/ttmemory-client/"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
