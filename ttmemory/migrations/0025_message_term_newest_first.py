"""The search index of message postings on ``(term, session, seq)`` instead of ``(term)``, and
on PostgreSQL a function that reads a term's newest postings through it: the read stops at
``MESSAGE_SEARCH_TERM_LIMIT`` where ``(term)`` made a search read and sort every posting of a
word used in most of a namespace's messages (docs/benchmarks.md, "message_search at 100,000
messages"). The new index is built before the old one is dropped; building it reads every
posting once (a table of many postings takes a while, and writes to it wait meanwhile)."""

from typing import Any

from django.db import migrations, models

#: The newest postings of each of ``terms`` in a namespace (of ``sessions`` only, unless NULL),
#: at most ``lim`` per term. Planned inside the function with bitmap scans and sorts off: the
#: planner estimates a term's postings from the column's statistics (a few hundred), and for so
#: few it read every posting of the term by a bitmap scan and sorted them, which for a word in
#: most of a million messages is the whole list; the backward index scan on
#: ``(term, session, seq)`` stops at ``lim`` whatever the estimate. One call per search (a
#: function with SET clauses is never inlined, and each call costs its setting and resetting).
FUNCTION = """
CREATE OR REPLACE FUNCTION ttmemory_newest_postings(
    terms bigint[], ns text, lim integer, sessions bigint[]
) RETURNS TABLE (term bigint, session_id bigint, seq bigint, tf integer)
LANGUAGE sql STABLE PARALLEL SAFE
SET enable_bitmapscan = off
SET enable_sort = off
AS $$
    SELECT v.t, p.session_id::bigint, p.seq::bigint, p.tf::integer
    FROM unnest(terms) AS v(t)
    CROSS JOIN LATERAL (
        SELECT m.session_id, m.seq, m.tf FROM ttmemory_messageterm m
        WHERE m.term = v.t AND m.namespace = ns
            AND (sessions IS NULL OR m.session_id = ANY(sessions))
        ORDER BY m.session_id DESC, m.seq DESC
        LIMIT lim
    ) p
$$
"""


def create_function(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(FUNCTION)


def drop_function(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "DROP FUNCTION IF EXISTS ttmemory_newest_postings(bigint[], text, integer, bigint[])"
        )


class Migration(migrations.Migration):
    dependencies = [("ttmemory", "0024_apikey_expires_at")]

    operations = [
        migrations.AddIndex(
            model_name="messageterm",
            index=models.Index(fields=["term", "session", "seq"], name="ttm_msgterm_term_seq_idx"),
        ),
        migrations.RemoveIndex(model_name="messageterm", name="ttm_msgterm_term_idx"),
        migrations.RunPython(create_function, drop_function, elidable=False),
    ]
