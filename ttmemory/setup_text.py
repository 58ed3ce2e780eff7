"""What a new project needs to start: fresh keys and the settings that read them.

Shared by ``python -m ttmemory init`` (before the app is in ``INSTALLED_APPS``) and
``python manage.py ttmemory_init``. Keys are made here and printed, never stored.
"""

from __future__ import annotations

import base64
import secrets

from ttmemory.crypto import generate_key


def blind_index_key() -> str:
    """A new ``BLIND_INDEX_KEY``: base64 of 32 random bytes."""
    return base64.urlsafe_b64encode(secrets.token_bytes(32)).decode()


def init_text(*, key_id: str = "k1") -> str:
    """Fresh keys as environment variables, and the settings block to paste."""
    encryption = generate_key(key_id)
    blind = blind_index_key()
    return f"""\
# 1. Keep these secret (a secrets manager in production); ttmemory reads them from the
#    environment when TTMEMORY does not name them:
export TTMEMORY_ENCRYPTION_KEYS="{encryption}"
export TTMEMORY_BLIND_INDEX_KEY="{blind}"

# 2. settings.py: nothing else is required (`python manage.py check` names what is missing).
INSTALLED_APPS = [
    # ...
    "ttmemory",
]
# SQLite: let concurrent writers wait instead of failing with "database is locked".
# DATABASES["default"]["OPTIONS"] = {{"transaction_mode": "IMMEDIATE", "timeout": 30}}
# Optional, everything else has defaults: see the README's Settings table.
# TTMEMORY = {{"LEARN_EVERY": 10}}

# 3. python manage.py migrate
"""
