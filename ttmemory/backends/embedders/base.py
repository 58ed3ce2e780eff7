"""The embedder contract: texts in, unit-length float vectors of a fixed dimension out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence


class Embedder(ABC):
    """Turns texts into vectors for recall by meaning.

    ``model`` names the vectors (stored with every fact so two models are never mixed) and
    ``dimensions`` is their length. ``embed`` returns one vector per text, normalised to unit
    length, or raises ``ttmemory.exceptions.EmbeddingError`` (recall then falls back to
    keywords, and the fact is stored without a vector).
    """

    model: str
    dimensions: int
    #: Weight of vector scores in hybrid recall when RECALL_VECTOR_WEIGHT is unset. 0.1: the
    #: rule of ``bench/fusion_generalise.py`` (the smallest weight within one standard error of
    #: the best on two tuning sets) chose it for WordLlama, and all-MiniLM-L6-v2 at 0.1 kept
    #: LoCoMo at the keyword default's level where 0.8 (the conversational tune half's best)
    #: fell 0.11 below it (issue 35; not measured here: no torch on the machine).
    recall_vector_weight: float = 0.1
    #: Weight of a neighbouring fact's score in recall when RECALL_CONTEXT_WEIGHT is unset
    #: (``ttmemory.longterm.fusion``), chosen the same way.
    recall_context_weight: float = 0.25
    #: Weight of the second, "feedback" keyword query in recall when RECALL_FEEDBACK_WEIGHT is
    #: unset (``ttmemory.longterm.fusion.feedback``). 0.75 for a sentence embedder: best on the
    #: conversational set's tune half (multi-hop questions: the second turn of a two-turn
    #: answer is found through what the first names), with the best five facts kept in place
    #: (``fusion.FEEDBACK_PROTECTED``), so a recall of ``k`` <= 5 is unchanged and skips its two
    #: statements. It lowered the synthetic set's recall@10 by 0.009 (docs/benchmarks.md, fusion
    #: study); HashEmbedder and WordLlama set 0 (it gained them nothing on tune).
    recall_feedback_weight: float = 0.75
    #: Evidence floor of recall when RECALL_EVIDENCE_SIMILARITY is unset: a fact matches the
    #: query by itself when it shares a keyword with it or its cosine similarity to the query
    #: reaches this (``fusion.unpadded``). Calibrated per embedder as the 95th percentile of
    #: the similarity between a question and the turns sharing no word with it and holding no
    #: evidence for it (the conversational set's tune half, docs/benchmarks.md); 0.3 here is
    #: not calibrated (no sentence embedder was available when it was measured).
    recall_evidence_similarity: float = 0.3
    #: The same for ``message_search`` when MESSAGE_SEARCH_VECTOR_WEIGHT is unset; None: the
    #: recall weight. 0 means past messages are searched by keyword only and not embedded.
    #: ``bench/fusion_generalise.py --target messages`` chose it for HashEmbedder (0),
    #: WordLlama (0) and all-MiniLM-L6-v2 (0.7); an OpenAI-compatible embedder was not
    #: measured and keeps its recall weight.
    message_search_vector_weight: float | None = None
    #: True when a call costs money (a vendor bills tokens): such calls are recorded in the
    #: cost ledger and count against ``DAILY_TOKEN_BUDGET``; local embedders cost nothing.
    billable: bool = False

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text, in order."""

    def embed_with_usage(self, texts: Sequence[str]) -> tuple[list[list[float]], int]:
        """``embed`` plus the tokens the call used (0 when the backend does not know), for the
        cost ledger; thread-safe, unlike reading counters off a shared backend."""
        return self.embed(texts), 0

    def embed_one(self, text: str) -> list[float]:
        return self.embed([text])[0]

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release clients; called when settings change."""
