"""gunicorn settings of the demo (``gunicorn -c demo_project/gunicorn.conf.py``).

With ``PROMETHEUS_MULTIPROC_DIR`` set, every worker writes its metrics there and ``/metrics``
sums them; a worker that exits is marked dead so its live gauges stop counting.
"""

import os

from ttmemory.telemetry.prometheus import child_exit  # noqa: F401  (gunicorn's hook)

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("GUNICORN_WORKERS", "3"))
wsgi_app = "demo_project.wsgi:application"
