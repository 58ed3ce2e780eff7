"""MkDocs hooks: the REST reference from clients/openapi.json, and links out of docs/.

- ``<!-- openapi: endpoints -->`` in a page becomes a table per tag of every operation in the
  committed OpenAPI snapshot (method, path, summary), so the REST reference cannot drift from the
  schema ``./dev clients`` regenerates.
- A link from a page to a file of the repository outside ``docs/`` (``../ttmemory/conf.py``,
  ``../clients/python/README.md``) becomes the file's path in code: it exists in the repository
  but not on the site. A link to a file that does not exist stays, so ``--strict`` fails on it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "clients" / "openapi.json"
MARKER = "<!-- openapi: endpoints -->"
LINK = re.compile(r"(?<!!)\[([^\]]+)\]\(((?:\.\./)+[^)#\s]+)(#[^)\s]*)?\)")
METHODS = ("get", "post", "put", "patch", "delete")


def endpoint_tables(schema: dict[str, Any]) -> str:
    """One Markdown table per tag: method, path (under the mount point) and summary."""
    by_tag: dict[str, list[tuple[str, str, str]]] = {}
    for path, operations in schema["paths"].items():
        for method in METHODS:
            operation = operations.get(method)
            if operation is None:
                continue
            tag = (operation.get("tags") or ["other"])[0]
            summary = " ".join((operation.get("summary") or "").split()).replace("|", "\\|")
            by_tag.setdefault(tag, []).append((method.upper(), path, summary))
    parts = []
    for tag in sorted(by_tag):
        rows = "\n".join(f"| `{m}` | `{p}` | {s} |" for m, p, s in by_tag[tag])
        parts.append(f"### {tag}\n\n| method | path | what it does |\n|---|---|---|\n{rows}\n")
    return "\n".join(parts)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if MARKER in markdown:
        markdown = markdown.replace(MARKER, endpoint_tables(json.loads(SCHEMA.read_text())))
    docs_dir = Path(config["docs_dir"]).resolve()
    page_dir = (docs_dir / page.file.src_path).parent

    def outside(match: re.Match[str]) -> str:
        target = (page_dir / match.group(2)).resolve()
        if target.is_relative_to(docs_dir) or not target.exists():
            return match.group(0)  # MkDocs resolves it, or --strict reports it
        return f"{match.group(1)} (`{target.relative_to(ROOT)}` in the repository)"

    return LINK.sub(outside, markdown)
