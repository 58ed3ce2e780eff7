"""The episodic index leaves the append path: each session records how far it is indexed.

Sessions that exist already were indexed when their messages were stored (the index was written
in the append's transaction until now), so their mark starts at their ``last_seq``.
"""

from django.db import migrations, models
from django.db.models import F


def mark_indexed(apps, schema_editor):  # type: ignore[no-untyped-def]
    sessions = apps.get_model("ttmemory", "MemorySession")
    sessions.objects.using(schema_editor.connection.alias).update(indexed_upto_seq=F("last_seq"))


class Migration(migrations.Migration):
    dependencies = [("ttmemory", "0013_partitioned_history")]

    operations = [
        migrations.AddField(
            model_name="memorysession",
            name="indexed_upto_seq",
            field=models.PositiveBigIntegerField(
                default=0,
                help_text=(
                    "Messages up to this seq are in the episodic index (message_search); later "
                    "ones are indexed by the message_index job and scored from the messages "
                    "meanwhile."
                ),
            ),
        ),
        migrations.RunPython(mark_indexed, migrations.RunPython.noop),
    ]
