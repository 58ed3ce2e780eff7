"""prompt_build: profile, recalled memories and session state in one system message, then the
window, all within a token budget. Stored text is untrusted: it is quoted so it can never close
or forge a section."""

from __future__ import annotations

import json
import re
from typing import Any

from ttmemory import conversation
from ttmemory.conf import app_settings
from ttmemory.exceptions import ContextBudgetError, MemoryValidationError
from ttmemory.longterm.episodes import message_text
from ttmemory.models import MemorySession
from ttmemory.results import PromptContext
from ttmemory.selectors.episodes import message_search
from ttmemory.selectors.facts import fact_recall, profile_get
from ttmemory.selectors.sessions import WindowSource, message_recent
from ttmemory.validation import clean_count

CUT_MARK = "…[cut]"
# What JSON leaves raw but could break a line or hide text: every line break Unicode knows
# (JSON escapes \n \r \v \f and the other C0 controls, not U+0085, U+2028 or U+2029), the C1
# controls and DEL, and the bidi controls that reorder what a reader sees.
_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069<>&]")


def quote(value: Any) -> str:
    """JSON-quote ``value`` on one line with ``<``, ``>``, ``&``, every line break (U+0085,
    U+2028, U+2029 included), C1 controls and bidi controls escaped as ``\\uXXXX``: no newline,
    tag or heading inside it can end the section it sits in. Keys are quoted the same way."""
    text = json.dumps(value, ensure_ascii=False)
    return _UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


#: Why a section of the system message came back empty (``PromptContext.empty``).
NOT_ASKED = "not asked"  # memories=0, episodes=0
NO_QUERY = "no query"  # no query given and no user message in the session to ask with
NOTHING_STORED = "nothing stored"  # no profile, no state variables
NOTHING_RELEVANT = "nothing relevant"  # recall or message_search found nothing for the query
ALL_IN_WINDOW = "all in window"  # every past message found is live in this session's history
OVER_BUDGET = "over budget"  # found, but dropped to fit max_tokens (or strict=False overflow)


def _section(name: str, lines: list[str]) -> str:
    return f"<{name}>\n" + "\n".join(lines) + f"\n</{name}>" if lines else ""


def prompt_build(
    *,
    session: MemorySession,
    query: str | None = None,
    max_tokens: int,
    memories: int = 5,
    strict: bool = True,
    episodes: int = 0,
) -> PromptContext:
    """Everything to send for the next turn of ``session``, within ``max_tokens``.

    The system message holds, in order: the namespace's profiles as ``"key": value`` lines
    (keys and values quoted by ``quote``),
    up to ``memories`` facts recalled for ``query`` (default: the last user message), each cut
    at ``PROMPT_MEMORY_CHARS`` characters and marked when cut, and the session's state
    variables. The total never exceeds ``max_tokens``: what the window must keep (system
    messages, summary, the newest group and its question; see ``context_window``) is reserved
    first, then memories that do not fit are dropped from the least relevant, then state and
    profile lines; the window gets the rest. When what the window must keep alone exceeds
    ``max_tokens``, ``ContextBudgetError`` is raised, or with ``strict=False`` the sections are
    left empty, the window holds what must be kept and ``overflow`` says by how much it is over.

    With ``episodes`` > 0, a fourth section ``past_conversations`` holds up to that many past
    messages found by ``message_search`` for the same query (other sessions of the namespace,
    and this session's archived messages: its live ones are in the window), each quoted and
    cut like a memory; it is the first dropped when the budget is short.

    ``PromptContext.empty`` says why each empty section is empty: ``"not asked"``
    (``memories=0``, ``episodes=0``), ``"no query"``, ``"nothing stored"`` (profile, state),
    ``"nothing relevant"`` (recall or ``message_search`` found nothing), ``"all in window"``
    (every past message found is live in this session, so already in the window) or
    ``"over budget"`` (found, then dropped to fit ``max_tokens``).
    """
    max_tokens = clean_count(max_tokens, field="max_tokens")
    memories = clean_count(memories, field="memories")
    episodes = clean_count(episodes, field="episodes")
    if query is not None and not isinstance(query, str):
        raise MemoryValidationError("query", "must be a string")
    encoding = app_settings.TOKENIZER
    limit = app_settings.PROMPT_MEMORY_CHARS
    source = WindowSource(session, max_tokens)
    if strict and source.required > max_tokens:
        raise ContextBudgetError(required=source.required, max_tokens=max_tokens)
    room = max(0, max_tokens - source.required)  # what the system message may take

    profile_lines = [
        f"{quote(key)}: {quote(value)}"
        for kind, data in profile_get(namespace=session.namespace).items()
        for key, value in sorted(data.items())
        if kind
    ]
    state = MemorySession.objects.filter(pk=session.pk).values_list("state", flat=True).get() or {}
    state_lines = [f"{quote(key)}: {quote(value)}" for key, value in sorted(state.items())]

    if query is None:
        recent = [m for m in message_recent(session=session, limit=20) if m.get("role") == "user"]
        last = recent[-1].get("content") if recent else None
        query = last if isinstance(last, str) else None
    asked = bool(query and query.strip())
    empty: dict[str, str] = {}
    if not profile_lines:
        empty["profile"] = NOTHING_STORED
    if not state_lines:
        empty["state"] = NOTHING_STORED
    memory_lines: list[str] = []
    mode = "none"
    if not memories:
        empty["memories"] = NOT_ASKED
    elif not asked:
        empty["memories"] = NO_QUERY
    if query and query.strip() and memories:
        result = fact_recall(namespace=session.namespace, query=query, k=memories)
        mode = result.mode
        for fact, _score in result.hits:
            text = fact.text if len(fact.text) <= limit else fact.text[:limit] + CUT_MARK
            memory_lines.append(f"- {quote(text)}")
        if not memory_lines:
            empty["memories"] = NOTHING_RELEVANT

    episode_lines: list[str] = []
    if not episodes:
        empty["episodes"] = NOT_ASKED
    elif not asked:
        empty["episodes"] = NO_QUERY
    if query and query.strip() and episodes:
        found = message_search(namespace=session.namespace, query=query, k=episodes * 3, window=0)
        if not found:
            empty["episodes"] = NOTHING_RELEVANT
        for hit in found:
            if hit.session.pk == session.pk and not hit.archived:
                continue  # in the live history, so in (or trimmed from) the window
            text = message_text(hit.message)
            text = text if len(text) <= limit else text[:limit] + CUT_MARK
            where = f"{hit.session.key}#{hit.seq} {hit.message.get('role', '')}"
            episode_lines.append(f"- {quote(where)}: {quote(text)}")
            if len(episode_lines) == episodes:
                break
        if found and not episode_lines:
            empty["episodes"] = ALL_IN_WINDOW

    def count(text: str) -> int:
        return conversation.count_text_tokens(text, encoding=encoding) if text else 0

    sections = {
        "profile": _section("profile", profile_lines),
        "memories": _section("memories", memory_lines),
        "state": _section("session_state", state_lines),
    }
    if episodes:
        sections["episodes"] = _section("past_conversations", episode_lines)

    def system_tokens_of(text: str) -> int:
        return count(text) + 4 if text else 0  # + the message's own overhead

    # Drop past conversations, then the least relevant memories, then state lines, then
    # profile lines until it fits: first by the sum of the sections (cheap), then by the exact
    # count of the joined text.
    for exact in (False, True):
        for name, lines, tag in (
            ("episodes", episode_lines, "past_conversations"),
            ("memories", memory_lines, "memories"),
            ("state", state_lines, "session_state"),
            ("profile", profile_lines, "profile"),
        ):
            while (
                lines
                and (
                    system_tokens_of("\n\n".join(t for t in sections.values() if t))
                    if exact
                    else sum(count(t) for t in sections.values()) + 8
                )
                > room
            ):
                lines.pop()
                sections[name] = _section(tag, lines)
    for name, lines in (
        ("episodes", episode_lines),
        ("memories", memory_lines),
        ("state", state_lines),
        ("profile", profile_lines),
    ):
        if name in sections and not lines and name not in empty:
            empty[name] = OVER_BUDGET  # found, then dropped to fit
    system = "\n\n".join(text for text in sections.values() if text)
    system_tokens = system_tokens_of(system)
    context = source.window(max_tokens - system_tokens, strict=False)
    window = context.messages
    window_tokens = context.tokens
    tokens = {name: count(text) for name, text in sections.items()}
    tokens["window"] = window_tokens
    return PromptContext(
        system=system,
        window=window,
        sections=sections,
        tokens=tokens,
        total=system_tokens + window_tokens,
        recall_mode=mode,
        overflow=max(0, system_tokens + window_tokens - max_tokens),
        empty=empty,
    )
