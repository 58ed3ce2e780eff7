"""``python -m ttmemory init``: print fresh keys and the settings block for a new project."""

from __future__ import annotations

import argparse
import sys

from ttmemory.setup_text import init_text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ttmemory")
    commands = parser.add_subparsers(dest="command", required=True)
    init = commands.add_parser("init", help="print fresh keys and the settings to paste")
    init.add_argument("--key-id", default="k1", help="id stored with each encrypted value")
    options = parser.parse_args(argv)
    if options.command == "init":
        sys.stdout.write(init_text(key_id=options.key_id))
    return 0


if __name__ == "__main__":
    sys.exit(main())
