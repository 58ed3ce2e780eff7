"""Long-term memory over HTTP: facts (recall, learn and supersede are actions), learning
jobs, profiles."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter
from rest_framework import mixins, status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from ttmemory.api import serializers as s
from ttmemory.api.base import MemoryPagination, MemoryViewSet, extend_schema
from ttmemory.api.examples import FACT_EXAMPLE, JOB_EXAMPLE
from ttmemory.api.filters import FactFilter
from ttmemory.models import Fact, LearnJob
from ttmemory.selectors import fact_recall, profile_get
from ttmemory.services import fact_forget, fact_remember, fact_supersede, profile_update
from ttmemory.services.learnjobs import learn_job_create
from ttmemory.validation import clean_kind

FACTS_DESCRIPTION = "Current facts (all versions with ``include_superseded``), newest first."


class FactViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.DestroyModelMixin,
    MemoryViewSet,
):
    """Current facts (all versions with ``include_superseded``), newest first."""

    schema_tag = "facts"
    schema_verbs = {"create": "remember", "destroy": "forget"}

    serializer_class = s.FactSerializer
    pagination_class = MemoryPagination
    filter_backends = [FactFilter]
    lookup_url_kwarg = "fact_id"
    lookup_value_converter = "int"

    def get_queryset(self) -> Any:
        return (
            Fact.objects.for_namespace(self.namespace)
            .select_related("usage")  # recall_count, without a query per fact
            .defer("embedding")
            .order_by("-created_at", "-pk")
        )

    @extend_schema(
        description=FACTS_DESCRIPTION,
        summary="List facts",
        responses=s.FactSerializer(many=True),
        parameters=[s.FactListQuerySerializer],
        examples=[OpenApiExample("Fact", value=FACT_EXAMPLE, response_only=True)],
    )
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(
        description=FACTS_DESCRIPTION,
        summary="Remember a fact (an upsert: 201 created, 200 when the same text existed)",
        request=s.FactCreateSerializer,
        responses={200: s.FactSerializer, 201: s.FactSerializer},
        examples=[
            OpenApiExample(
                "Remember",
                value={
                    "text": "Prefers a window seat",
                    "kind": "preference",
                    "metadata": {"source": "chat"},
                    "source": {"session": 7, "seqs": [1]},
                },
            ),
            OpenApiExample("Remembered", value=FACT_EXAMPLE, response_only=True),
        ],
    )
    def create(self, request: Request) -> Response:
        data = self.valid_body(s.FactCreateSerializer)
        source = None
        if data.get("source"):
            session = self.session_from_body(data["source"]["session"], field="source.session")
            source = (session, data["source"]["seqs"])
        fact, created = fact_remember(
            namespace=self.namespace,
            text=data["text"],
            kind=data["kind"],
            metadata=data.get("metadata"),
            source=source,
            expires_at=data.get("expires_at"),
            with_created=True,
        )
        return Response(
            s.FactSerializer(fact).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )

    @extend_schema(
        summary="Get a fact (any version; follow superseded_by for the newer one)",
        examples=[OpenApiExample("Fact", value=FACT_EXAMPLE, response_only=True)],
    )
    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().retrieve(request, *args, **kwargs)

    @extend_schema(summary="Forget a fact for good", responses={204: None})
    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().destroy(request, *args, **kwargs)

    def perform_destroy(self, instance: Fact) -> None:
        fact_forget(namespace=self.namespace, fact_id=instance.pk)

    @extend_schema(
        summary="Correct a fact: a new version supersedes it (the old one is kept, ended)",
        request=s.FactSupersedeSerializer,
        responses={201: s.FactSerializer, 409: None},
        examples=[OpenApiExample("Correct", value={"text": "Prefers an aisle seat"})],
    )
    @action(detail=True, methods=["post"], url_name="fact-supersede")
    def supersede(self, request: Request, fact_id: int) -> Response:
        fact = self.get_object()
        data = self.valid_body(s.FactSupersedeSerializer)
        if fact.superseded_by_id is not None or fact.valid_to is not None:
            return Response(
                {"detail": "This fact was already superseded or ended; correct the current one."},
                status=status.HTTP_409_CONFLICT,
            )
        new = fact_supersede(
            namespace=self.namespace,
            fact_id=fact.pk,
            text=data["text"],
            kind=data.get("kind"),
            metadata=data.get("metadata"),
        )
        return Response(s.FactSerializer(new).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        summary="Recall facts by meaning and keyword (hybrid; keyword-only if the embedder fails)",
        request=s.RecallRequestSerializer,
        responses=s.RecallSerializer,
        examples=[
            OpenApiExample("Recall", value={"query": "where should I seat them?", "k": 5}),
            OpenApiExample(
                "Hits",
                value={
                    "mode": "hybrid",
                    "fallback_reason": "",
                    "evidence_similarity": 1.0,
                    "unpadded": 0,
                    "hits": [{"fact": FACT_EXAMPLE, "score": 0.82}],
                },
                response_only=True,
            ),
        ],
    )
    @action(detail=False, methods=["post"], url_name="recall", serializer_class=s.RecallSerializer)
    def recall(self, request: Request) -> Response:
        data = self.valid_body(s.RecallRequestSerializer)
        result = fact_recall(
            namespace=self.namespace,
            query=data["query"],
            k=data["k"],
            kinds=data.get("kinds") or None,
            metadata=data.get("metadata") or None,
        )
        return Response(s.RecallSerializer(result).data)

    @extend_schema(
        summary="Learn facts from a session's new messages, in the background (202)",
        request=s.LearnRequestSerializer,
        responses={202: s.LearnJobSerializer},
        examples=[
            OpenApiExample("Learn", value={"session": 7}),
            OpenApiExample("Queued", value={**JOB_EXAMPLE, "status": "queued"}, response_only=True),
        ],
    )
    @action(detail=False, methods=["post"], url_name="learn", serializer_class=s.LearnJobSerializer)
    def learn(self, request: Request) -> Response:
        data = self.valid_body(s.LearnRequestSerializer)
        session = self.session_from_body(data["session"], field="session")
        job = learn_job_create(session=session)
        location = reverse("ttmemory-api:learn-job", kwargs={"job_id": job.pk})
        return Response(
            s.LearnJobSerializer(job).data,
            status=status.HTTP_202_ACCEPTED,
            headers={"Location": request.build_absolute_uri(location)},
        )


class LearnJobViewSet(mixins.RetrieveModelMixin, MemoryViewSet):
    """Where a learning job stands."""

    schema_tag = "facts"
    schema_verbs = {"retrieve": "learn_job"}

    serializer_class = s.LearnJobSerializer
    lookup_url_kwarg = "job_id"
    lookup_value_converter = "uuid"

    def get_queryset(self) -> Any:
        return LearnJob.objects.filter(namespace=self.namespace)

    @extend_schema(
        summary="Status of a learning job",
        examples=[OpenApiExample("Done", value=JOB_EXAMPLE, response_only=True)],
    )
    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().retrieve(request, *args, **kwargs)


PROFILE_KIND = OpenApiParameter(
    "kind", str, OpenApiParameter.PATH, description="Profile name, e.g. 'user'."
)


class ProfileViewSet(MemoryViewSet):
    """Profiles: free-form JSON per kind; PATCH merges keys."""

    schema_tag = "profiles"

    # profile_get reads a profile whole (no model rows to look up): answered as it returns it.

    serializer_class = s.ProfileUpdateSerializer
    lookup_field = "kind"
    lookup_value_converter = "str"

    @extend_schema(
        summary="All profiles of the namespace, by kind",
        responses={200: OpenApiTypes.OBJECT},
        examples=[
            OpenApiExample(
                "Profiles", value={"user": {"name": "Ada", "city": "Lisbon"}}, response_only=True
            )
        ],
    )
    def list(self, request: Request) -> Response:
        return Response(profile_get(namespace=self.namespace))

    @extend_schema(
        summary="One profile's data ({} when none)",
        parameters=[PROFILE_KIND],
        responses={200: dict[str, Any]},
        examples=[OpenApiExample("Profile", value={"name": "Ada"}, response_only=True)],
    )
    def retrieve(self, request: Request, kind: str) -> Response:
        return Response(profile_get(namespace=self.namespace, kind=clean_kind(kind)))

    @extend_schema(
        summary="Merge keys into a profile (a null value removes one)",
        parameters=[PROFILE_KIND],
        request=s.ProfileUpdateSerializer,
        responses={200: dict[str, Any]},
        examples=[OpenApiExample("Update", value={"data": {"city": "Porto", "old": None}})],
    )
    def partial_update(self, request: Request, kind: str) -> Response:
        data = self.valid_body(s.ProfileUpdateSerializer)
        profile = profile_update(
            namespace=self.namespace,
            kind=clean_kind(kind),
            data=data["data"],
            expires_at=data.get("expires_at"),
        )
        return Response(dict(profile.data))
