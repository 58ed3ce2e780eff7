"""Errors raised by ttmemory: one base class, one subclass per failure a caller can handle."""

from __future__ import annotations


class TTMemoryError(Exception):
    """Base class of every error ttmemory raises on purpose."""


class MemoryValidationError(TTMemoryError, ValueError):
    """Input was rejected before anything was written.

    ``field`` names the offending part of the input (for example ``"role"`` or
    ``"messages[3].tool_call_id"``) so interfaces can render a 400 that names it.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class HistoryPointError(MemoryValidationError):
    """A point in a session's history to rewind or fork at is not one: ``seq`` is not a live
    message of the session, or cutting after it would split a tool group (an assistant's tool
    calls and their results are kept or removed whole).

    ``group`` is ``(first_seq, last_seq)`` of the tool group it would split, else None: cut
    before ``first_seq`` or at ``last_seq`` (or later) instead. Nothing was changed.
    """

    def __init__(
        self, field: str, message: str, *, seq: int, group: tuple[int, int] | None = None
    ) -> None:
        super().__init__(field, message)
        self.seq = seq
        self.group = group


class NamespaceAccessError(TTMemoryError):
    """The caller (an API key, a user) may not act on the namespace it asked for."""


class DecryptionError(TTMemoryError):
    """A stored value could not be decrypted: wrong or missing key, or tampered data."""


class EncryptionKeyError(TTMemoryError):
    """The encryption keyring is missing or malformed."""


class LockTimeout(TTMemoryError):
    """The session lock could not be taken within ``LOCK_TIMEOUT``."""


class SnapshotIntegrityError(TTMemoryError):
    """A snapshot's payload fails authentication or disagrees with its counters; not restored."""


class EmbeddingError(TTMemoryError):
    """The embedder failed or timed out; callers fall back to keyword recall."""


class LLMError(TTMemoryError):
    """The language model call failed (after its retries) or answered something unusable."""


class RateLimitedError(TTMemoryError):
    """A namespace's ``LLM_RATE_LIMIT`` is reached: nothing was called; try after ``retry_after``.

    Queued jobs are put back on their queue with that countdown (``ttmemory.tasks``); the work
    is not lost, only later.
    """

    def __init__(self, namespace: str, retry_after: float) -> None:
        super().__init__(
            f"LLM rate limit of namespace {namespace!r} reached; retry in {retry_after:.1f} s"
        )
        self.namespace = namespace
        self.retry_after = retry_after


class LegalHoldError(TTMemoryError):
    """A legal hold suspends every deletion in its scope; nothing was deleted.

    ``namespace`` and ``session_id`` (None: the whole namespace) name the hold, ``reason`` is
    the reason recorded when it was placed. Lift the hold first (admin or API, with the
    permission), then retry.
    """

    def __init__(self, *, namespace: str, session_id: int | None, reason: str, action: str) -> None:
        scope = (
            f"session {session_id} of namespace {namespace!r}"
            if session_id
            else (f"namespace {namespace!r}")
        )
        held = f"{scope} is under legal hold ({reason or 'no reason given'})"
        if not namespace:  # refused by the database (SQLite), which cannot name the hold
            held = "the row's namespace or session is under legal hold"
        super().__init__(f"{action} refused: {held}; lift the hold first")
        self.namespace = namespace
        self.session_id = session_id
        self.reason = reason
        self.action = action


class ContextBudgetError(MemoryValidationError):
    """``max_tokens`` is smaller than what a context window must keep.

    What must be kept: the system messages, the rolling summary, the newest message group and
    the question (user message) of its turn. ``required`` is their token count, ``max_tokens``
    the budget asked for. Nothing was written. Pass ``strict=False`` to get what must be kept
    anyway, with the overflow reported.
    """

    def __init__(self, *, required: int, max_tokens: int) -> None:
        super().__init__(
            "max_tokens",
            f"the window needs at least {required} tokens (system messages, summary, the newest "
            f"message group and its question) but the budget is {max_tokens}; raise max_tokens "
            "or pass strict=False to get what must be kept with the overflow reported.",
        )
        self.required = required
        self.max_tokens = max_tokens
