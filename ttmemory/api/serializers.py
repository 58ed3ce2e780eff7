"""Request and response shapes. Requests are checked here for types and ranges; the services
check meaning (message structure, kinds, identifiers) and their errors name the field too.
Responses are rendered by these serializers from what the services and selectors return
(models, result dataclasses, mappings); only the message page renders values directly."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from django.db.models import prefetch_related_objects
from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers

from ttmemory.models import Fact, LearnJob, MemorySession, Message, Snapshot
from ttmemory.selectors.retention import Retention, retention_effective, session_expires_at
from ttmemory.services.facts import MAX_SOURCE_SEQS

MAX_ID = 2**63 - 1
MAX_TOKENS = 10_000_000


class SessionCountersSerializer(serializers.ModelSerializer[MemorySession]):
    """A session's counters (what an append answers with)."""

    class Meta:
        model = MemorySession
        fields = [
            "id",
            "key",
            "metadata",
            "message_count",
            "token_count",
            "last_seq",
            "parent",
            "forked_at_seq",
            "created_at",
            "updated_at",
        ]
        # Rendered, never parsed: read-only, so the document carries no bounds taken from the
        # database (PositiveIntegerField is 32-bit on PostgreSQL, 64-bit on SQLite).
        read_only_fields = ["message_count"]


class SessionSerializer(SessionCountersSerializer):
    expires_at = serializers.SerializerMethodField(
        help_text="When the session expires unless written to again (its last write plus the "
        "namespace's session lifetime); null: kept forever. See docs/retention.md."
    )

    class Meta(SessionCountersSerializer.Meta):
        fields = [*SessionCountersSerializer.Meta.fields, "expires_at"]

    @extend_schema_field(serializers.DateTimeField(allow_null=True))
    def get_expires_at(self, obj: MemorySession) -> Any:
        # One policy read per namespace per response (a page of sessions shares it).
        context = cast("dict[str, Any]", self.context)
        cache: dict[str, Retention] = context.setdefault("retention", {})
        if obj.namespace not in cache:
            cache[obj.namespace] = retention_effective(namespace=obj.namespace)
        expires = session_expires_at(session=obj, retention=cache[obj.namespace])
        return serializers.DateTimeField().to_representation(expires) if expires else None


class SessionDetailSerializer(SessionSerializer):
    summary = serializers.CharField(allow_null=True, help_text="Rolling summary of trimmed turns.")
    state = serializers.DictField(help_text="Named variables shown in the prompt.")

    class Meta(SessionSerializer.Meta):
        fields = [*SessionSerializer.Meta.fields, "summary", "summary_upto_seq", "state"]
        read_only_fields = SessionSerializer.Meta.read_only_fields


class SessionOpenSerializer(serializers.Serializer[Any]):
    key = serializers.CharField(max_length=255, trim_whitespace=False, help_text="Your id.")
    metadata = serializers.DictField(required=False, help_text="Stored in clear; no content.")


class SessionUpdateSerializer(serializers.Serializer[Any]):
    state = serializers.DictField(help_text="Variables to merge; a null value removes one.")


class MessageSerializer(serializers.ModelSerializer[Message]):
    tokens = serializers.IntegerField(source="token_count")
    archived = serializers.SerializerMethodField()
    message = serializers.JSONField(source="data", help_text="Chat Completions message.")

    class Meta:
        model = Message
        fields = ["seq", "role", "tokens", "archived", "created_at", "message"]

    def get_archived(self, obj: Message) -> bool:
        return obj.archived_at is not None


class MessageAppendSerializer(serializers.Serializer[Any]):
    message = serializers.DictField(required=False, help_text="One message.")
    messages = serializers.ListField(
        child=serializers.DictField(), required=False, help_text="Several, in order."
    )

    @staticmethod
    def quick(data: Any) -> dict[str, Any] | None:
        """The validated data of the common bodies, ``{"message": {...}}`` and ``{"messages":
        [{...}, ...]}``, as the serializer would give them; None for anything else (which the
        serializer then checks, with its errors). Building the serializer's fields was a tenth
        of an append's CPU (bench/api_profile.py)."""
        if type(data) is not dict or len(data) != 1:
            return None
        if type(one := data.get("message")) is dict:
            return {"message": {str(key): value for key, value in one.items()}}
        many = data.get("messages")
        if type(many) is list and many and all(type(item) is dict for item in many):
            return {"messages": [{str(k): v for k, v in item.items()} for item in many]}
        return None

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("message" in attrs) == ("messages" in attrs):
            raise serializers.ValidationError(
                {"messages": ["send either 'message' (one) or 'messages' (a list), not both"]}
            )
        if "messages" in attrs and not attrs["messages"]:
            raise serializers.ValidationError({"messages": ["must not be empty"]})
        return attrs


class MessagesAddedSerializer(serializers.Serializer[Any]):
    messages = MessageSerializer(many=True)
    session = SessionSerializer()


class MessagePageQuerySerializer(serializers.Serializer[Any]):
    limit = serializers.IntegerField(min_value=1, max_value=1000, default=50)
    before = serializers.IntegerField(
        min_value=1, max_value=MAX_ID, required=False, help_text="Only messages older than this."
    )
    archived = serializers.BooleanField(default=False, help_text="Include trimmed messages.")

    @staticmethod
    def quick(data: Any) -> dict[str, Any] | None:
        """The validated data of the common queries (none, or ``limit`` alone as 1 to 4
        digits), as the serializer would give them; None for anything else (which the
        serializer then checks, with its errors)."""
        if not data:
            return {"limit": 50, "archived": False}
        if len(data) == 1 and len(values := data.getlist("limit")) == 1:
            text = values[0]
            if 0 < len(text) <= 4 and text.isascii() and text.isdigit() and 1 <= int(text) <= 1000:
                return {"limit": int(text), "archived": False}
        return None


@extend_schema_serializer(many=False)  # one page object, though it answers a list route
class MessagePageSerializer(serializers.Serializer[Any]):
    results = MessageSerializer(many=True)
    next = serializers.CharField(allow_null=True, help_text="URL of the older page, or null.")


class ContextQuerySerializer(serializers.Serializer[Any]):
    max_tokens = serializers.IntegerField(min_value=1, max_value=MAX_TOKENS)


class ContextSerializer(serializers.Serializer[Any]):
    messages = serializers.ListField(child=serializers.DictField())
    tokens = serializers.IntegerField()


class PromptRequestSerializer(serializers.Serializer[Any]):
    query = serializers.CharField(
        required=False, allow_null=True, max_length=10_000, help_text="Default: last user turn."
    )
    max_tokens = serializers.IntegerField(min_value=1, max_value=MAX_TOKENS)
    memories = serializers.IntegerField(min_value=0, max_value=50, default=5)


class PromptSerializer(serializers.Serializer[Any]):
    system = serializers.CharField()
    messages = serializers.ListField(child=serializers.DictField())
    tokens = serializers.DictField(child=serializers.IntegerField())
    total = serializers.IntegerField()
    recall_mode = serializers.CharField()
    empty = serializers.DictField(
        child=serializers.CharField(),
        help_text="Why each empty section is empty: not asked, no query, nothing stored, "
        "nothing relevant, all in window or over budget.",
    )


class TrimRequestSerializer(serializers.Serializer[Any]):
    max_tokens = serializers.IntegerField(min_value=0, max_value=MAX_TOKENS)


class TrimSerializer(serializers.Serializer[Any]):
    removed = serializers.IntegerField()
    removed_tokens = serializers.IntegerField()
    kept = serializers.IntegerField()
    kept_tokens = serializers.IntegerField()
    mode = serializers.CharField()
    removed_seqs = serializers.ListField(child=serializers.IntegerField())


class ClearSerializer(serializers.Serializer[Any]):
    deleted = serializers.IntegerField()


class SnapshotSerializer(serializers.ModelSerializer[Snapshot]):
    class Meta:
        model = Snapshot
        fields = ["id", "label", "kind", "message_count", "token_count", "upto_seq", "created_at"]
        read_only_fields = ["message_count"]  # as SessionSerializer's


class SnapshotCreateSerializer(serializers.Serializer[Any]):
    label = serializers.CharField(  # type: ignore[assignment]
        max_length=200, required=False, allow_blank=True, default=""
    )


class SeqMessageSerializer(serializers.Serializer[Any]):
    # Renders a (seq, message) pair, as SnapshotDiff holds them.
    seq = serializers.IntegerField()
    message = serializers.DictField()

    def to_representation(self, instance: Any) -> Any:
        seq, message = instance
        return super().to_representation({"seq": seq, "message": message})


class SourceSerializer(serializers.Serializer[Any]):
    session = serializers.IntegerField(min_value=1, max_value=MAX_ID)
    seqs = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=MAX_ID),
        default=list,
        max_length=MAX_SOURCE_SEQS,
        help_text="Seqs of messages of that session the fact came from.",
    )


class FactSourceSerializer(serializers.Serializer[Any]):
    session = serializers.IntegerField(allow_null=True, help_text="Null: no source session.")
    seqs = serializers.ListField(child=serializers.IntegerField())


def fetch_usage(facts: Iterable[Fact]) -> None:
    """The recall statistics of ``facts`` about to be rendered (``recall_count``, read from
    ``FactUsage``) in one query, not one per fact; facts fetched with them already are skipped."""
    prefetch_related_objects(list(facts), "usage")


class FactListSerializer(serializers.ListSerializer[Fact]):
    def to_representation(self, data: Any) -> Any:
        facts = list(data.all() if hasattr(data, "all") else data)
        fetch_usage(facts)
        return super().to_representation(facts)


class FactSerializer(serializers.ModelSerializer[Fact]):
    text = serializers.CharField()
    source = serializers.SerializerMethodField()  # type: ignore[assignment]
    recall_count = serializers.IntegerField(read_only=True)  # FactUsage's, via Fact's property

    class Meta:
        model = Fact
        fields = [
            "id",
            "kind",
            "text",
            "metadata",
            "source",
            "valid_from",
            "valid_to",
            "superseded_by",
            "expires_at",
            "recall_count",
            "created_at",
            "updated_at",
        ]
        list_serializer_class = FactListSerializer

    @extend_schema_field(FactSourceSerializer)
    def get_source(self, obj: Fact) -> dict[str, Any]:
        return {"session": obj.source_session_id, "seqs": list(obj.source_seqs or [])}


class SnapshotDiffSerializer(serializers.Serializer[Any]):
    remove = SeqMessageSerializer(many=True, help_text="Live messages the rollback removes.")
    restore = SeqMessageSerializer(many=True, help_text="Messages it brings back.")
    tokens_removed = serializers.IntegerField()
    tokens_restored = serializers.IntegerField()
    summary_changes = serializers.BooleanField()
    facts_superseded = FactSerializer(many=True, help_text="Facts learned only from removed turns.")


class RollbackRequestSerializer(serializers.Serializer[Any]):
    safe = serializers.BooleanField(
        default=True, help_text="Store a safety snapshot first, so the rollback can be undone."
    )


class RollbackSerializer(serializers.Serializer[Any]):
    safety_snapshot = SnapshotSerializer(allow_null=True)
    removed_seqs = serializers.ListField(child=serializers.IntegerField())
    restored_seqs = serializers.ListField(child=serializers.IntegerField())
    facts_superseded = serializers.ListField(child=serializers.IntegerField())
    session = SessionDetailSerializer()
    undo = serializers.CharField(
        allow_null=True, help_text="POST here (the safety snapshot's rollback) to undo."
    )


class RewindQuerySerializer(serializers.Serializer[Any]):
    to_seq = serializers.IntegerField(
        min_value=1, max_value=MAX_ID, help_text="Keep the live messages up to this seq."
    )


class RewindRequestSerializer(RewindQuerySerializer):
    reason = serializers.CharField(
        max_length=2000,
        required=False,
        allow_blank=True,
        default="",
        help_text="Why; recorded in the audit log and the safety snapshot's label.",
    )


class ForkRequestSerializer(serializers.Serializer[Any]):
    at_seq = serializers.IntegerField(
        min_value=0,
        max_value=MAX_ID,
        required=False,
        allow_null=True,
        default=None,
        help_text="Copy the live messages up to this seq (0: none; null: all of them).",
    )
    key = serializers.CharField(
        max_length=255,
        required=False,
        trim_whitespace=False,
        help_text="The fork's session key (default: the parent's key with a random suffix).",
    )


class EditRequestSerializer(serializers.Serializer[Any]):
    seq = serializers.IntegerField(
        min_value=1, max_value=MAX_ID, help_text="The message to replace in the new branch."
    )
    message = serializers.DictField(help_text="The edited message (Chat Completions).")
    key = serializers.CharField(
        max_length=255,
        required=False,
        trim_whitespace=False,
        help_text="The new branch's session key (default: the parent's key with a suffix).",
    )


class FactCreateSerializer(serializers.Serializer[Any]):
    text = serializers.CharField(max_length=20_000, trim_whitespace=False)
    kind = serializers.CharField(max_length=32, default="fact")
    metadata = serializers.DictField(required=False)
    expires_at = serializers.DateTimeField(required=False, allow_null=True)
    source = SourceSerializer(required=False, allow_null=True)  # type: ignore[assignment]


class FactSupersedeSerializer(serializers.Serializer[Any]):
    text = serializers.CharField(max_length=20_000, trim_whitespace=False)
    kind = serializers.CharField(max_length=32, required=False)
    metadata = serializers.DictField(required=False)


class FactListQuerySerializer(serializers.Serializer[Any]):
    kind = serializers.ListField(child=serializers.CharField(max_length=32), required=False)
    include_superseded = serializers.BooleanField(default=False)


class RecallRequestSerializer(serializers.Serializer[Any]):
    query = serializers.CharField(max_length=10_000)
    k = serializers.IntegerField(min_value=1, max_value=100, default=5)
    kinds = serializers.ListField(
        child=serializers.CharField(max_length=32), required=False, allow_empty=True
    )
    metadata = serializers.DictField(required=False, help_text="Facts whose metadata has these.")


class RecallHitSerializer(serializers.Serializer[Any]):
    # Renders a (fact, score) hit of RecallResult; scores to six decimals.
    fact = FactSerializer()
    score = serializers.FloatField()

    def to_representation(self, instance: Any) -> Any:
        fact, score = instance
        return super().to_representation({"fact": fact, "score": round(score, 6)})


class RecallSerializer(serializers.Serializer[Any]):
    mode = serializers.ChoiceField(choices=["hybrid", "keyword", "vector"])
    fallback_reason = serializers.CharField(allow_blank=True)
    evidence_similarity = serializers.FloatField(
        allow_null=True,
        help_text="The evidence floor in force: every hit shares a keyword with the query, is "
        "at least this similar to it, or sits in a passage about it.",
    )
    unpadded = serializers.IntegerField(
        help_text="Facts next to a match that neighbour context would have padded the hits "
        "with, left out (fewer than k hits instead)."
    )
    hits = RecallHitSerializer(many=True)  # their recall counts: one query (fact_recall's)


class LearnRequestSerializer(serializers.Serializer[Any]):
    session = serializers.IntegerField(min_value=1, max_value=MAX_ID, help_text="Session id.")


class LearnJobSerializer(serializers.ModelSerializer[LearnJob]):
    class Meta:
        model = LearnJob
        fields = [
            "id",
            "status",
            "session",
            "upto_seq",
            "changes",
            "fact_ids",
            "error",
            "created_at",
            "finished_at",
        ]


class ProfileUpdateSerializer(serializers.Serializer[Any]):
    data = serializers.DictField(help_text="Keys to merge; a null value removes one.")  # type: ignore[assignment]
    expires_at = serializers.DateTimeField(required=False, allow_null=True)


class NamespaceSerializer(serializers.Serializer[Any]):
    namespace = serializers.CharField()


class EraseRequestSerializer(serializers.Serializer[Any]):
    confirm = serializers.CharField(
        max_length=300, trim_whitespace=False, help_text="Type the namespace to confirm."
    )


class ReceiptSerializer(serializers.Serializer[Any]):
    namespace = serializers.CharField()
    counts = serializers.DictField(child=serializers.IntegerField())
    redis_keys = serializers.IntegerField()
    erased_at = serializers.CharField()
    total = serializers.IntegerField()
    kept = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="Rows that outlive the erase by design (the audit log: ids and counts only).",
    )


class LedgerQuerySerializer(serializers.Serializer[Any]):
    days = serializers.IntegerField(min_value=1, max_value=3660, default=30)


class LedgerRowSerializer(serializers.Serializer[Any]):
    day = serializers.CharField()
    purpose = serializers.CharField()
    model = serializers.CharField()
    calls = serializers.IntegerField()
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    total_tokens = serializers.IntegerField()
    errors = serializers.IntegerField()  # type: ignore[assignment]
    skipped = serializers.IntegerField()


class RetentionPolicySerializer(serializers.Serializer[Any]):
    """The namespace's own lifetimes, in seconds: null inherits the setting, 0 keeps forever."""

    session_ttl = serializers.FloatField(allow_null=True, required=False, min_value=0)
    session_expiry = serializers.ChoiceField(
        choices=["", "delete", "archive"], allow_blank=True, required=False
    )
    archived_message_ttl = serializers.FloatField(allow_null=True, required=False, min_value=0)
    snapshot_ttl = serializers.FloatField(allow_null=True, required=False, min_value=0)
    ledger_ttl = serializers.FloatField(allow_null=True, required=False, min_value=0)


class LegalHoldSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField(read_only=True)
    session = serializers.IntegerField(
        source="session_id",
        allow_null=True,
        required=False,
        min_value=1,
        max_value=MAX_ID,
        help_text="A session id; null or absent: the whole namespace.",
    )
    reason = serializers.CharField(max_length=500, help_text="Why (e.g. a case number).")
    placed_by = serializers.CharField(read_only=True)
    placed_at = serializers.DateTimeField(read_only=True)


class RetentionSerializer(serializers.Serializer[Any]):
    """The lifetimes in force (seconds; null: kept forever), the namespace's own policy and its
    legal holds."""

    namespace = serializers.CharField()
    effective = serializers.DictField()
    policy = RetentionPolicySerializer(allow_null=True)
    holds = LegalHoldSerializer(many=True)


class MessageSearchRequestSerializer(serializers.Serializer[Any]):
    query = serializers.CharField(max_length=10_000)
    k = serializers.IntegerField(min_value=1, max_value=100, default=10)
    window = serializers.IntegerField(
        min_value=0, max_value=20, default=2, help_text="Neighbouring messages each side."
    )
    sessions = serializers.ListField(
        child=serializers.CharField(max_length=255),
        required=False,
        allow_empty=False,
        help_text="Session keys to search (default: every session of the namespace).",
    )


class ContextMessageSerializer(serializers.Serializer[Any]):
    seq = serializers.IntegerField()
    message = serializers.JSONField(help_text="Chat Completions message.")


class MessageHitSerializer(serializers.Serializer[Any]):
    # Renders a MessageHit; scores to six decimals.
    session = serializers.IntegerField(source="session.pk", help_text="Session id.")
    session_key = serializers.CharField(source="session.key")
    seq = serializers.IntegerField()
    score = serializers.FloatField()
    archived = serializers.BooleanField()
    created_at = serializers.DateTimeField()
    message = serializers.JSONField(help_text="Chat Completions message.")
    context = serializers.SerializerMethodField(  # type: ignore[assignment]
        help_text="Neighbouring messages of the session, in order."
    )

    def to_representation(self, instance: Any) -> Any:
        data = super().to_representation(instance)
        data["score"] = round(instance.score, 6)
        return data

    @extend_schema_field(ContextMessageSerializer(many=True))
    def get_context(self, instance: Any) -> list[dict[str, Any]]:
        return [{"seq": seq, "message": message} for seq, message in instance.context]


class MessageSearchSerializer(serializers.Serializer[Any]):
    hits = MessageHitSerializer(many=True)
