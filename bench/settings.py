"""The demo project's settings plus the ``bench`` app, whose commands run the benchmarks."""

from __future__ import annotations

from demo_project.settings import *  # noqa: F403
from demo_project.settings import INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "bench"]


# The write-path benchmark (bench/write_path.py) measures ttmemory with the database options a
# project would have: TTMEMORY_BENCH_DB_OPTIONS=plain drops the embedded server's
# server_side_binding / prepare_threshold (a plain DATABASES entry); TTMEMORY_BENCH_SYNC_COMMIT=off
# turns synchronous_commit off for the connection (shows what the WAL flush costs).
def _bench_database_options() -> None:
    import os

    from demo_project.settings import DATABASES

    options = DATABASES["default"].setdefault("OPTIONS", {})
    if DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        return
    if os.environ.get("TTMEMORY_BENCH_DB_OPTIONS") == "plain":
        options.pop("server_side_binding", None)
        options.pop("prepare_threshold", None)
    if os.environ.get("TTMEMORY_BENCH_SYNC_COMMIT") == "off":
        options["options"] = (options.get("options", "") + " -c synchronous_commit=off").strip()


_bench_database_options()


# TTMEMORY_BENCH_VECTOR_CACHE_MB=0 turns recall's in-memory vectors off (an A/B of
# ttmemory/longterm/vector_cache.py with the same command); unset: the app's default.
def _bench_vector_cache() -> None:
    import os

    from demo_project.settings import TTMEMORY

    if os.environ.get("TTMEMORY_BENCH_VECTOR_CACHE_MB"):
        TTMEMORY["RECALL_VECTOR_CACHE_MB"] = int(os.environ["TTMEMORY_BENCH_VECTOR_CACHE_MB"])


_bench_vector_cache()


# TTMEMORY_BENCH_INDEX_IN_BACKGROUND=0 runs the index jobs in the appending thread after commit,
# as before INDEX_IN_BACKGROUND (an A/B with the same command); unset: the app's default.
def _bench_index_in_background() -> None:
    import os

    from demo_project.settings import TTMEMORY

    if os.environ.get("TTMEMORY_BENCH_INDEX_IN_BACKGROUND"):
        TTMEMORY["INDEX_IN_BACKGROUND"] = os.environ["TTMEMORY_BENCH_INDEX_IN_BACKGROUND"] == "1"


_bench_index_in_background()
