"""A second process for revocation tests: ``python -m tests.security.auth_worker DB_NAME``.

Reads commands from stdin, one a line, and answers each with one line: ``check RAW_KEY``
(``accepted``/``refused``: ``api_key_check`` in this process, which the other process never
tells of its changes), ``revoke PK`` and ``delete PK`` (``done``).
"""

from __future__ import annotations

import os
import sys

import django


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    from django.conf import settings

    settings.DATABASES["default"]["NAME"] = sys.argv[1]
    django.setup()
    from ttmemory.models import ApiKey
    from ttmemory.services.access import api_key_check, api_key_revoke

    for line in sys.stdin:
        command, _, arg = line.strip().partition(" ")
        if command == "check":
            answer = "accepted" if api_key_check(raw_key=arg) is not None else "refused"
        elif command == "revoke":
            api_key_revoke(key=ApiKey.objects.get(pk=int(arg)))
            answer = "done"
        elif command == "delete":
            ApiKey.objects.filter(pk=int(arg)).delete()
            answer = "done"
        else:
            answer = f"unknown {command}"
        print(answer, flush=True)


if __name__ == "__main__":
    main()
