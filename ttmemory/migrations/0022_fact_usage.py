"""Recall statistics move off the fact row into ``FactUsage`` (``ttmemory.models.fact``): an
update of the wide fact row was inserted again into every index of the table, HNSW included.
Counts already written are copied over (and back when unapplied)."""

import django.db.models.deletion
from django.db import migrations, models

from ttmemory.models.generation import trigger_sql

BATCH = 5000


def copy_to_usage(apps, schema_editor):
    Fact = apps.get_model("ttmemory", "Fact")
    FactUsage = apps.get_model("ttmemory", "FactUsage")
    alias = schema_editor.connection.alias
    recalled = (
        Fact.objects.using(alias)
        .filter(models.Q(recall_count__gt=0) | models.Q(last_recalled_at__isnull=False))
        .order_by("pk")
        .values_list("pk", "recall_count", "last_recalled_at")
    )
    rows = []
    for pk, count, at in recalled.iterator(chunk_size=BATCH):
        rows.append(FactUsage(fact_id=pk, recall_count=count, last_recalled_at=at))
        if len(rows) >= BATCH:
            FactUsage.objects.using(alias).bulk_create(rows)
            rows = []
    FactUsage.objects.using(alias).bulk_create(rows)


def copy_back(apps, schema_editor):
    Fact = apps.get_model("ttmemory", "Fact")
    FactUsage = apps.get_model("ttmemory", "FactUsage")
    alias = schema_editor.connection.alias
    for usage in FactUsage.objects.using(alias).order_by("pk").iterator(chunk_size=BATCH):
        Fact.objects.using(alias).filter(pk=usage.pk).update(
            recall_count=usage.recall_count, last_recalled_at=usage.last_recalled_at
        )


def reinstall_sqlite_triggers(apps, schema_editor):
    """SQLite drops or adds a column by rebuilding the table, and the table's triggers (the
    fact generation's, migrations 0019-0020) are dropped with the old one: created again."""
    if schema_editor.connection.vendor != "sqlite":
        return
    for sql in [*trigger_sql("sqlite", forwards=False), *trigger_sql("sqlite", version=2)]:
        schema_editor.execute(sql, params=None)


class Migration(migrations.Migration):
    dependencies = [("ttmemory", "0021_message_term_no_db_constraint")]

    operations = [
        migrations.CreateModel(
            name="FactUsage",
            fields=[
                (
                    "fact",
                    models.OneToOneField(
                        db_constraint=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="usage",
                        serialize=False,
                        to="ttmemory.fact",
                    ),
                ),
                ("recall_count", models.PositiveIntegerField(default=0)),
                ("last_recalled_at", models.DateTimeField(blank=True, null=True)),
            ],
        ),
        migrations.RunPython(copy_to_usage, copy_back, elidable=False),
        # Unapplying, the fields come back after this (by a rebuild on SQLite): triggers again.
        migrations.RunPython(migrations.RunPython.noop, reinstall_sqlite_triggers),
        migrations.RemoveField(model_name="fact", name="last_recalled_at"),
        migrations.RemoveField(model_name="fact", name="recall_count"),
        migrations.RunPython(reinstall_sqlite_triggers, migrations.RunPython.noop),
    ]
