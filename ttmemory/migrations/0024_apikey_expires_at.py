"""API keys may expire: ``ApiKey.expires_at`` (empty for existing keys: they never expire)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("ttmemory", "0023_legal_hold_triggers")]

    operations = [
        migrations.AddField(
            model_name="apikey",
            name="expires_at",
            field=models.DateTimeField(
                blank=True,
                help_text="Refused from this moment on; empty: never expires.",
                null=True,
            ),
        ),
    ]
