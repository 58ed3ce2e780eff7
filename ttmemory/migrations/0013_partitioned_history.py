"""Partition the message table by hash of session when TTMEMORY["PARTITIONED_HISTORY"] asks.

Read at migrate time; nothing on SQLite or when the setting is unset. Changes no model state,
so it is the same migration on every database (``makemigrations --check`` stays clean).
"""

from django.db import migrations

import ttmemory.models.partitioning


class Migration(migrations.Migration):
    dependencies = [
        ("ttmemory", "0012_episodic_index"),
    ]

    operations = [
        ttmemory.models.partitioning.PartitionHistoryIfConfigured(),
    ]
