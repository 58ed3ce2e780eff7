"""A local encryption key for the demo, generated once into a git-ignored file."""

from __future__ import annotations

import base64
import os
import secrets
from pathlib import Path

from ttmemory.crypto import generate_key


def local_encryption_keys(data_dir: Path) -> list[str] | None:
    """Keys from ``TTMEMORY_ENCRYPTION_KEYS`` if set, else from ``data_dir/demo-keys.txt``."""
    if os.environ.get("TTMEMORY_ENCRYPTION_KEYS"):
        return None  # ttmemory.conf reads the environment itself
    path = data_dir / "demo-keys.txt"
    if not path.exists():
        data_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(generate_key("demo1") + "\n")
    return [line.strip() for line in path.read_text().splitlines() if line.strip()]


def local_blind_key(data_dir: Path) -> str | None:
    """The blind-index key: ``TTMEMORY_BLIND_INDEX_KEY``, else ``data_dir/demo-blind-key.txt``."""
    if os.environ.get("TTMEMORY_BLIND_INDEX_KEY"):
        return None
    path = data_dir / "demo-blind-key.txt"
    if not path.exists():
        data_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(base64.urlsafe_b64encode(secrets.token_bytes(32)).decode() + "\n")
    return path.read_text().strip()
