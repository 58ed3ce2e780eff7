"""Long-term memory over HTTP: facts, recall, learning jobs, profiles."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from django.urls import reverse
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from ttmemory.api import serializers as s
from ttmemory.api.base import MemoryAPIView, MemoryPagination
from ttmemory.models import Fact, LearnJob
from ttmemory.selectors import fact_recall, profile_get
from ttmemory.services import fact_forget, fact_remember, fact_supersede, profile_update
from ttmemory.services.facts import clean_kind
from ttmemory.services.learnjobs import learn_job_create

FACT_EXAMPLE = {
    "id": 31,
    "kind": "preference",
    "text": "Prefers a window seat",
    "metadata": {"source": "chat"},
    "source": {"session": 7, "seqs": [1]},
    "valid_from": "2026-11-30T09:00:00Z",
    "valid_to": None,
    "superseded_by": None,
    "expires_at": None,
    "recall_count": 2,
    "created_at": "2026-11-30T09:00:00Z",
    "updated_at": "2026-11-30T09:00:00Z",
}
JOB_EXAMPLE = {
    "id": "0f8c3c1e-3a52-4a8e-9d53-7f4c8f1d2a10",
    "status": "done",
    "session": 7,
    "upto_seq": 12,
    "changes": {"ADD": 2, "SUPERSEDE": 1},
    "fact_ids": [31, 32, 33],
    "error": "",
    "created_at": "2026-11-30T09:02:00Z",
    "finished_at": "2026-11-30T09:02:01Z",
}


class FactListView(MemoryAPIView):
    """Current facts (all versions with ``include_superseded``), newest first."""

    serializer_class = s.FactSerializer
    pagination_class = MemoryPagination

    def get_queryset(self) -> Any:
        query = self.valid_query(s.FactListQuerySerializer)
        queryset = Fact.objects.filter(namespace=self.namespace).defer("embedding")
        if not query["include_superseded"]:
            queryset = queryset.current()
        if query.get("kind"):
            queryset = queryset.filter(kind__in=[clean_kind(k) for k in query["kind"]])
        return queryset.order_by("-created_at", "-pk")

    @extend_schema(
        summary="List facts",
        responses=s.FactSerializer(many=True),
        parameters=[s.FactListQuerySerializer],
        examples=[OpenApiExample("Fact", value=FACT_EXAMPLE, response_only=True)],
    )
    def get(self, request: Request) -> Response:
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(s.FactSerializer(page, many=True).data)

    @extend_schema(
        summary="Remember a fact (an upsert: the same text is one fact)",
        request=s.FactCreateSerializer,
        responses={201: s.FactSerializer},
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
    def post(self, request: Request) -> Response:
        data = self.valid_body(s.FactCreateSerializer)
        source = None
        if data.get("source"):
            session = self.session_from_body(data["source"]["session"], field="source.session")
            source = (session, data["source"]["seqs"])
        fact = fact_remember(
            namespace=self.namespace,
            text=data["text"],
            kind=data["kind"],
            metadata=data.get("metadata"),
            source=source,
            expires_at=data.get("expires_at"),
        )
        return Response(s.FactSerializer(fact).data, status=status.HTTP_201_CREATED)


class FactDetailView(MemoryAPIView):
    serializer_class = s.FactSerializer

    @extend_schema(
        summary="Get a fact (any version; follow superseded_by for the newer one)",
        examples=[OpenApiExample("Fact", value=FACT_EXAMPLE, response_only=True)],
    )
    def get(self, request: Request, fact_id: int) -> Response:
        return Response(s.FactSerializer(self.get_fact(fact_id)).data)

    @extend_schema(summary="Forget a fact for good", responses={204: None})
    def delete(self, request: Request, fact_id: int) -> Response:
        fact = self.get_fact(fact_id)
        fact_forget(namespace=self.namespace, fact_id=fact.pk)
        return Response(status=status.HTTP_204_NO_CONTENT)


class FactSupersedeView(MemoryAPIView):
    serializer_class = s.FactSerializer

    @extend_schema(
        summary="Correct a fact: a new version supersedes it (the old one is kept, ended)",
        request=s.FactSupersedeSerializer,
        responses={201: s.FactSerializer, 409: None},
        examples=[OpenApiExample("Correct", value={"text": "Prefers an aisle seat"})],
    )
    def post(self, request: Request, fact_id: int) -> Response:
        fact = self.get_fact(fact_id)
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


class RecallView(MemoryAPIView):
    serializer_class = s.RecallSerializer

    @extend_schema(
        summary="Recall facts by meaning and keyword (hybrid; keyword-only if the embedder fails)",
        request=s.RecallRequestSerializer,
        examples=[
            OpenApiExample("Recall", value={"query": "where should I seat them?", "k": 5}),
            OpenApiExample(
                "Hits",
                value={
                    "mode": "hybrid",
                    "fallback_reason": "",
                    "hits": [{"fact": FACT_EXAMPLE, "score": 0.82}],
                },
                response_only=True,
            ),
        ],
    )
    def post(self, request: Request) -> Response:
        data = self.valid_body(s.RecallRequestSerializer)
        result = fact_recall(
            namespace=self.namespace,
            query=data["query"],
            k=data["k"],
            kinds=data.get("kinds") or None,
            metadata=data.get("metadata") or None,
        )
        return Response(
            {
                "mode": result.mode,
                "fallback_reason": result.fallback_reason,
                "hits": [
                    {"fact": s.FactSerializer(fact).data, "score": round(score, 6)}
                    for fact, score in result.hits
                ],
            }
        )


class LearnView(MemoryAPIView):
    serializer_class = s.LearnJobSerializer

    @extend_schema(
        summary="Learn facts from a session's new messages, in the background (202)",
        request=s.LearnRequestSerializer,
        responses={202: s.LearnJobSerializer},
        examples=[
            OpenApiExample("Learn", value={"session": 7}),
            OpenApiExample("Queued", value={**JOB_EXAMPLE, "status": "queued"}, response_only=True),
        ],
    )
    def post(self, request: Request) -> Response:
        data = self.valid_body(s.LearnRequestSerializer)
        session = self.session_from_body(data["session"], field="session")
        job = learn_job_create(session=session)
        job.refresh_from_db()  # inline (no broker): it may already be done
        location = reverse("ttmemory-api:learn-job", kwargs={"job_id": job.pk})
        return Response(
            s.LearnJobSerializer(job).data,
            status=status.HTTP_202_ACCEPTED,
            headers={"Location": request.build_absolute_uri(location)},
        )


class LearnJobView(MemoryAPIView):
    serializer_class = s.LearnJobSerializer

    @extend_schema(
        summary="Status of a learning job",
        examples=[OpenApiExample("Done", value=JOB_EXAMPLE, response_only=True)],
    )
    def get(self, request: Request, job_id: Any) -> Response:
        job = LearnJob.objects.filter(namespace=self.namespace, pk=job_id).first()
        if job is None:
            raise Http404
        return Response(s.LearnJobSerializer(job).data)


PROFILE_KIND = OpenApiParameter(
    "kind", str, OpenApiParameter.PATH, description="Profile name, e.g. 'user'."
)


class ProfileListView(MemoryAPIView):
    serializer_class = s.ProfileUpdateSerializer

    @extend_schema(
        summary="All profiles of the namespace, by kind",
        responses={200: dict[str, Any]},
        examples=[
            OpenApiExample(
                "Profiles", value={"user": {"name": "Ada", "city": "Lisbon"}}, response_only=True
            )
        ],
    )
    def get(self, request: Request) -> Response:
        return Response(profile_get(namespace=self.namespace))


class ProfileDetailView(MemoryAPIView):
    serializer_class = s.ProfileUpdateSerializer

    @extend_schema(
        summary="One profile's data ({} when none)",
        parameters=[PROFILE_KIND],
        responses={200: dict[str, Any]},
        examples=[OpenApiExample("Profile", value={"name": "Ada"}, response_only=True)],
    )
    def get(self, request: Request, kind: str) -> Response:
        return Response(profile_get(namespace=self.namespace, kind=clean_kind(kind)))

    @extend_schema(
        summary="Merge keys into a profile (a null value removes one)",
        parameters=[PROFILE_KIND],
        request=s.ProfileUpdateSerializer,
        responses={200: dict[str, Any]},
        examples=[OpenApiExample("Update", value={"data": {"city": "Porto", "old": None}})],
    )
    def patch(self, request: Request, kind: str) -> Response:
        data = self.valid_body(s.ProfileUpdateSerializer)
        profile = profile_update(
            namespace=self.namespace,
            kind=clean_kind(kind),
            data=data["data"],
            expires_at=data.get("expires_at"),
        )
        return Response(dict(profile.data))
