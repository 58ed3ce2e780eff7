"""Legal holds enforced by the database: triggers refusing DELETE and content-changing UPDATE
of held rows (``ttmemory.models.holds``)."""

from django.db import migrations

from ttmemory.models.holds import LegalHoldTriggers


class Migration(migrations.Migration):
    dependencies = [("ttmemory", "0022_fact_usage")]

    operations = [LegalHoldTriggers()]
