"""A dependency-free progress bar for long-running management commands."""

from __future__ import annotations

import sys
import time
from typing import Any


class ProgressBar:
    """Prints ``label [#####.....] 50% 500/1000 12.3/s``: in place on a terminal, else by line."""

    def __init__(self, label: str, total: int, *, stream: Any = None, width: int = 30) -> None:
        self.label = label
        self.total = max(total, 0)
        self.done = 0
        self.stream = stream or sys.stdout
        self.width = width
        self.started = time.monotonic()
        self._last_print = 0.0
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def advance(self, count: int = 1) -> None:
        self.done += count
        now = time.monotonic()
        if self.done >= self.total or now - self._last_print >= (0.1 if self._tty else 2.0):
            self._last_print = now
            self._render(final=False)

    def finish(self) -> None:
        self._render(final=True)

    def _render(self, *, final: bool) -> None:
        fraction = 1.0 if self.total == 0 else min(self.done / self.total, 1.0)
        filled = int(fraction * self.width)
        rate = self.done / max(time.monotonic() - self.started, 1e-9)
        line = (
            f"{self.label} [{'#' * filled}{'.' * (self.width - filled)}] {fraction:4.0%} "
            f"{self.done}/{self.total} {rate:.1f}/s"
        )
        if self._tty:
            self.stream.write("\r" + line + ("\n" if final else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
