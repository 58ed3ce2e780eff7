"""Episodic recall rules: what of a message is indexed, and how past messages are scored.

Each message's own terms are indexed (blind postings, ``MessageTerm``); its neighbours are
added at query time: a message's keyword score is BM25 over its own terms plus its
``window`` neighbours' terms on each side of the same session, weighted ``NEIGHBOUR_WEIGHT``.
So a turn that answers "which one?" is found by the question it answers, an append never
rewrites older entries, and a deleted message leaves every window it was part of at once.
A question is weak evidence of its answer (``QUESTION_WEIGHT``), and a question holding every
word of the query (the query asked again, or the live question itself) lends its words to no
neighbour: "My dentist is Dr. Alvarez" ranks above "What was the name of my dentist?" and the
"Let me check." after it.
Vectors are one per message (its own text), cosine-ranked like facts' (pgvector in SQL, numpy
elsewhere); a message that asks keeps ``QUESTION_WEIGHT`` of its cosine too (``damped``).
"""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

import numpy as np
from django.db import connection
from django.db.models import Exists, F, OuterRef, Q, QuerySet
from django.db.models.expressions import RawSQL

from ttmemory.backends.embedders import get_embedder
from ttmemory.conf import app_settings
from ttmemory.longterm import blind, bm25, dialect
from ttmemory.longterm.dialect import Dialect
from ttmemory.models import MemorySession, Message, MessageEntry, MessageTerm
from ttmemory.models.compiled import CompiledQuery
from ttmemory.models.vectors import PGVECTOR, vector_storage

#: Weight of a neighbour's terms in a message's keyword score (its own count 1).
NEIGHBOUR_WEIGHT = 0.5
#: A question is weak evidence of its own answer: a message that asks (its text ends with a
#: question mark) keeps this part of its score. A question holding every word of the query
#: (the query asked again, or the live question itself) also lends its words to no neighbour,
#: so the reply to it ("Let me check") is not found through it (``keyword_scores``).
QUESTION_WEIGHT = 0.25
#: Messages holding at least half of the query's words whose text is read to tell questions
#: (the best this many by the share of the query's words they hold).
QUESTION_CHECK_LIMIT = 40
#: What ends a question, in the scripts the stemmer and segmenter know (ASCII, full width,
#: Arabic, Greek question marks).
QUESTION_MARKS = ("?", "\uff1f", "\u061f", "\u037e")

SessionSeq = tuple[int, int]


def vector_weight() -> float:
    """The blend weight of ``message_search``: ``MESSAGE_SEARCH_VECTOR_WEIGHT``, else the
    embedder's ``message_search_vector_weight``, else its recall weight. 0: keyword only."""
    configured = app_settings.MESSAGE_SEARCH_VECTOR_WEIGHT
    if configured is not None:
        return float(configured)
    embedder = get_embedder()
    own = embedder.message_search_vector_weight
    return float(embedder.recall_vector_weight if own is None else own)


def message_text(message: Mapping[str, Any]) -> str:
    """The searchable text of a Chat Completions message: its text content ("" if none)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            part.get("text")
            for part in content
            if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        ]
        return "\n".join(p for p in parts if p)
    return ""


def keyword_scores(
    namespace: str,
    query: str,
    *,
    window: int,
    limit: int,
    session_ids: Iterable[int] | None = None,
    neighbour_weight: float = NEIGHBOUR_WEIGHT,
    on_pending_cut: Callable[[int], None] | None = None,
) -> dict[SessionSeq, float]:
    """BM25 of ``query`` over each message's terms plus its neighbours' (``window`` each side).

    Scored in Python from the postings of the query's terms only (a few per message that uses
    them); a neighbour's term frequency counts ``neighbour_weight``. Document frequencies count
    messages, the length is the message's own plus its neighbours' at the same weight
    (estimated from the namespace's mean length). What the index holds is read in one
    statement (``_gather``); the messages awaiting the ``message_index`` job are scored from
    the stored messages (``pending_entries``, at most ``MESSAGE_SEARCH_PENDING_LIMIT``; when
    more wait, ``on_pending_cut`` is called with one of their sessions).
    """
    terms = blind.query_terms(query, namespace=namespace)
    if not terms:
        return {}
    ids = None if session_ids is None else list(session_ids)
    if ids is not None and not ids:
        return {}
    found = _gather(namespace, terms, ids, window)
    pending, cut = _pending(namespace, found.behind, app_settings.MESSAGE_SEARCH_PENDING_LIMIT)
    if cut is not None and on_pending_cut is not None:
        on_pending_cut(cut)
    rows = found.postings
    wanted = set(terms)
    df: dict[int, int] = dict(found.df)
    for _, counts in pending.values():
        for term in counts:
            if term in wanted:
                df[term] = df.get(term, 0) + 1
    rows.extend(
        (session_id, seq, term, tf)
        for (session_id, seq), (_, counts) in pending.items()
        for term, tf in counts.items()
        if term in wanted
    )
    if not rows:
        return {}
    questions, echoes = _questions(namespace, rows, set(terms))
    total = found.total
    avg_len = (found.total_terms / total if total else 1.0) or 1.0
    if pending:  # the messages awaiting the message_index job count as if indexed
        pending_terms = sum(length for length, _ in pending.values())
        avg_len = (avg_len * total + pending_terms) / (total + len(pending)) or 1.0
        total += len(pending)
    lengths = found.lengths
    lengths.update((key, length) for key, (length, _) in pending.items())

    def _lengths_of(keys: list[SessionSeq]) -> dict[SessionSeq, int]:
        # The statement left the neighbours' lengths out (too many postings): the indexed
        # ones of the best candidates, and the pending ones from the stored messages.
        read = entry_lengths(namespace, [key for key in keys if key not in lengths])
        return {**read, **{key: lengths[key] for key in keys if key in lengths}}

    return window_scores(
        rows,
        df=df,
        total=total,
        avg_len=avg_len,
        lengths=lengths,
        questions=questions,
        echoes=echoes,
        window=window,
        limit=limit,
        neighbour_weight=neighbour_weight,
        lengths_of=None if found.all_lengths else _lengths_of,
    )


def window_scores(
    rows: Sequence[tuple[int, int, Any, int]],
    *,
    df: Mapping[Any, int],
    total: int,
    avg_len: float,
    lengths: Mapping[SessionSeq, int],
    questions: Set[SessionSeq],
    echoes: Set[SessionSeq],
    window: int,
    limit: int,
    neighbour_weight: float = NEIGHBOUR_WEIGHT,
    lengths_of: Callable[[list[SessionSeq]], Mapping[SessionSeq, int]] | None = None,
) -> dict[SessionSeq, float]:
    """``keyword_scores``' arithmetic, storage-free: BM25 of each message's window from the
    query terms' postings ``rows`` (session, seq, term, tf), their document frequencies
    ``df`` among ``total`` messages of mean length ``avg_len``, the messages' own lengths
    ``lengths`` (else ``lengths_of`` gives those of the best candidates), and which of them
    ask (``questions``) or ask the query again (``echoes``).
    ``bench/fusion_generalise.py --target messages`` scores in memory through it."""
    if not rows:
        return {}
    idf = {t: bm25.idf(total, n) for t, n in df.items()}
    neighbour_len = neighbour_weight * 2 * window * avg_len
    window_avg = avg_len + neighbour_len
    windows = _windows(sorted(rows, key=itemgetter(2)), echoes, window, neighbour_weight)
    weights = np.array([idf[t] for t in windows.terms], dtype=np.float64)[windows.term]
    # First pass at the mean length, then the best candidates again at their own length
    # (which also drops neighbour seqs that are no indexed message: gaps, tool calls).
    # bm25's arithmetic on every (message, term) at once (numpy arrays through the same
    # function); summed per message in term order by bincount (sequential), so every float is
    # the one-by-one sum's.
    part = bm25.length_part(window_avg, avgdl=window_avg)
    tf = windows.tf
    per_term = bm25.saturated(tf, weight=weights, length_part=part)
    rough = np.bincount(windows.message, weights=per_term, minlength=len(windows.sessions))
    # Best first; ties by the larger (session, seq), as sorting (score, key) in reverse did.
    order = np.lexsort((-windows.seqs, -windows.sessions, -rough))[: limit * 3]
    found = [(int(windows.sessions[i]), int(windows.seqs[i])) for i in order.tolist()]
    if lengths_of is not None:
        lengths = lengths_of(found)
    starts = windows.starts.tolist()
    tf_values, weight_values = tf.tolist(), weights.tolist()
    saturated = bm25.saturated
    scores: dict[SessionSeq, float] = {}
    for i, key in zip(order.tolist(), found, strict=True):
        if key not in lengths:
            continue
        part = bm25.length_part(lengths[key] + neighbour_len, avgdl=window_avg)
        score = 0.0
        for g in range(starts[i], starts[i + 1]):
            score += saturated(tf_values[g], weight=weight_values[g], length_part=part)
        scores[key] = score
    for key in questions & set(scores):
        scores[key] *= QUESTION_WEIGHT
    best = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:limit]
    return dict(best)


@dataclass
class _Windows:
    """The weighted term frequencies of every message in the query's windows (``_windows``):
    one entry per (message, term), grouped by message, terms ascending within each."""

    terms: list[Any]  # the query terms, ascending (``term`` indexes them)
    term: Any  # per entry: its term's index
    tf: Any  # per entry: the weighted frequency
    message: Any  # per entry: its message's index
    sessions: Any  # per message: session id
    seqs: Any  # per message: seq
    starts: Any  # per message: its first entry (and one past the last at the end)


def _windows(
    rows: Sequence[tuple[int, int, Any, int]],
    echoes: Set[SessionSeq],
    window: int,
    neighbour_weight: float,
) -> _Windows:
    """Each posting of ``rows`` (sorted by term) counted for its message and lent at
    ``neighbour_weight`` to the ``window`` messages on each side (seq > 0), but an echo's.

    A (message, term)'s frequency sums its postings' counts in the order the postings come,
    nearer neighbours first (-1, +1, -2, +2, ...), as adding them one by one did."""
    n = len(rows)
    terms = list(dict.fromkeys(row[2] for row in rows))  # ascending: rows come sorted by term
    index = {term: i for i, term in enumerate(terms)}
    sessions = np.fromiter((row[0] for row in rows), dtype=np.int64, count=n)
    seqs = np.fromiter((row[1] for row in rows), dtype=np.int64, count=n)
    term = np.fromiter((index[row[2]] for row in rows), dtype=np.int64, count=n)
    counts = np.fromiter((row[3] for row in rows), dtype=np.float64, count=n)
    offsets = np.array(
        [0, *(d for distance in range(1, window + 1) for d in (-distance, distance))],
        dtype=np.int64,
    )
    lent = np.full(len(offsets), neighbour_weight, dtype=np.float64)
    lent[0] = 1.0
    spread = len(offsets)
    all_sessions = np.repeat(sessions, spread)
    all_seqs = np.repeat(seqs, spread) + np.tile(offsets, n)
    keep = all_seqs > 0
    if echoes:
        echo = np.fromiter(((row[0], row[1]) in echoes for row in rows), dtype=bool, count=n)
        keep &= ~(np.repeat(echo, spread) & np.tile(offsets != 0, n))
    all_sessions, all_seqs = all_sessions[keep], all_seqs[keep]
    all_terms = np.repeat(term, spread)[keep]
    weighted = (np.repeat(counts, spread) * np.tile(lent, n))[keep]
    # Group by (session, seq, term): a stable sort keeps each group's postings in their order.
    order = np.lexsort((all_terms, all_seqs, all_sessions))
    s, q, t = all_sessions[order], all_seqs[order], all_terms[order]
    new_message = np.empty(len(order), dtype=bool)
    new_message[:1] = True
    new_message[1:] = (s[1:] != s[:-1]) | (q[1:] != q[:-1])
    new_group = new_message.copy()
    new_group[1:] |= t[1:] != t[:-1]
    group = np.empty(len(order), dtype=np.int64)
    group[order] = np.cumsum(new_group) - 1
    tf = np.bincount(group, weights=weighted)  # sequential: in the postings' order
    firsts = np.flatnonzero(new_group)
    message = np.cumsum(new_message[firsts]) - 1
    message_starts = np.flatnonzero(new_message[firsts])
    return _Windows(
        terms=terms,
        term=t[firsts],
        tf=tf,
        message=message,
        sessions=s[firsts][message_starts],
        seqs=q[firsts][message_starts],
        starts=np.append(message_starts, len(firsts)),
    )


def is_question(text: str) -> bool:
    """Whether a message asks: its text, trailing quotes and spaces aside, ends with a question
    mark (``QUESTION_MARKS``)."""
    return text.rstrip(" \t\r\n\"'\u201d\u2019)»").endswith(QUESTION_MARKS)


def _questions(
    namespace: str, rows: list[tuple[int, int, int, int]], wanted: set[int]
) -> tuple[set[SessionSeq], set[SessionSeq]]:
    """``question_keys`` reading the texts it needs from the stored messages (the index keeps
    no plaintext, and no "asks" flag: a rule that changes needs no re-index)."""
    return question_keys(rows, wanted, lambda asked: _texts(namespace, asked))


def _texts(namespace: str, keys: Iterable[SessionSeq]) -> dict[SessionSeq, str]:
    """The text of the stored messages ``keys`` (one statement)."""
    wanted = set(keys)
    rows = messages_at(namespace, spans(wanted, 0))
    return {(s, q): message_text(data) for s, q, _, _, data in rows if (s, q) in wanted}


def spans(keys: Iterable[SessionSeq], window: int) -> list[tuple[int, int, int]]:
    """The messages within ``window`` of each of ``keys`` as spans (session, first seq, last
    seq), a session's adjacent or overlapping windows merged into one."""
    merged: list[tuple[int, int, int]] = []
    for session_id, seq in sorted(keys):
        first, last = max(1, seq - window), seq + window
        if merged and merged[-1][0] == session_id and first <= merged[-1][2] + 1:
            merged[-1] = (session_id, merged[-1][1], max(last, merged[-1][2]))
        else:
            merged.append((session_id, first, last))
    return merged


def messages_at(
    namespace: str, spans: Sequence[tuple[int, int, int]]
) -> list[tuple[int, int, Any, Any, dict[str, Any]]]:
    """``(session, seq, archived_at, created_at, data)`` of the stored messages of
    ``namespace`` in ``spans`` (session, first seq, last seq), in one statement.

    Compiled once per number of spans and connection (``CompiledQuery``): building and
    compiling the queryset cost a search more than the database took to answer, and the two
    ``IN`` lists it had (sessions, seqs) read and decrypted every message of their cross
    product, about twice the rows wanted."""
    if not spans:
        return []
    values: dict[str, Any] = {"ns": namespace}
    for i, (session_id, first, last) in enumerate(spans):
        values[f"s{i}"], values[f"a{i}"], values[f"b{i}"] = session_id, first, last
    return [tuple(row) for row in _MESSAGES_AT.rows(len(spans), **values)]


def _messages_at(spans: int, *, ns: str, **bounds: int) -> QuerySet[Any]:
    return (
        Message.objects.filter(namespace=ns)
        .filter(_in_spans(spans, bounds))
        .values_list("session_id", "seq", "archived_at", "created_at", "data")
    )


def _in_spans(spans: int, bounds: Mapping[str, int]) -> Q:
    """Rows in any of ``spans`` spans: ``s<i>`` the session, ``a<i>``..``b<i>`` its seqs."""
    where = Q()
    for i in range(spans):
        where |= Q(session_id=bounds[f"s{i}"], seq__gte=bounds[f"a{i}"], seq__lte=bounds[f"b{i}"])
    return where


_MESSAGES_AT = CompiledQuery(Message, _messages_at)


def vector_questions_damped(
    namespace: str, scores: Mapping[SessionSeq, float]
) -> dict[SessionSeq, float]:
    """``damped`` with the questions among the vector candidates ``scores``, read from the
    stored messages (one statement, at most the vector pool's rows)."""
    texts = _texts(namespace, scores)
    return damped(scores, {key for key, text in texts.items() if is_question(text)})


def damped(scores: Mapping[SessionSeq, float], asks: Set[SessionSeq]) -> dict[SessionSeq, float]:
    """A message that asks keeps ``QUESTION_WEIGHT`` of its vector score, as of its keyword
    score: a question is most similar to other questions ("Hi Ada! How have you been?" to
    "Does Ada like live music?"), not to the turn holding the answer. Without it every vector
    weight lowered the conversational set's tune half (``bench/fusion_generalise.py
    --target messages``: the messages vectors brought into the top 10 were questions)."""
    return {key: s * QUESTION_WEIGHT if key in asks else s for key, s in scores.items()}


def question_keys(
    rows: Sequence[tuple[int, int, Any, int]],
    wanted: Set[Any],
    read: Callable[[Sequence[SessionSeq]], Mapping[SessionSeq, str]],
) -> tuple[set[SessionSeq], set[SessionSeq]]:
    """Which messages holding at least half of the query's words (``wanted``) are questions,
    and of those the echoes (holding every query word).

    ``read`` gives the text of at most ``QUESTION_CHECK_LIMIT`` messages, the best by the
    share of the query's words they hold."""
    own: dict[SessionSeq, set[Any]] = defaultdict(set)
    for session_id, seq, term, _ in rows:
        own[(session_id, seq)].add(term)
    need = max(1, (len(wanted) + 1) // 2)
    asked = heapq.nsmallest(
        QUESTION_CHECK_LIMIT,
        (key for key, held in own.items() if len(held) >= need),
        key=lambda key: (-len(own[key]), -key[0], -key[1]),
    )
    if not asked:
        return set(), set()
    texts = read(asked)
    questions = {key for key, text in texts.items() if is_question(text)}
    echoes = {key for key in questions if set(own[key]) >= wanted}
    return questions, echoes


@dataclass
class _Index:
    """What the index holds for one query (``_gather``)."""

    total: int = 0  # indexed messages (BM25's N)
    total_terms: int = 0  # their summed lengths in terms
    df: dict[int, int] = field(default_factory=dict)  # query term -> indexed messages using it
    postings: list[tuple[int, int, int, int]] = field(default_factory=list)  # capped per term
    lengths: dict[SessionSeq, int] = field(default_factory=dict)  # own terms, near a posting
    behind: dict[int, tuple[int, int]] = field(default_factory=dict)  # session -> (mark, last)
    all_lengths: bool = True  # ``lengths`` holds every message near a posting


def _gather(namespace: str, terms: list[int], ids: list[int] | None, window: int) -> _Index:
    """The index's statistics, the query terms' postings and the lengths of the messages in
    their windows, and the sessions the ``message_index`` job is behind on: one statement,
    written once for both databases (``dialect``: the lists of terms and sessions, the read of
    each term's newest postings, and the cursor, prepared on PostgreSQL).

    A term found in more than ``MESSAGE_SEARCH_TERM_LIMIT`` messages contributes its newest
    postings only (highest session, then seq), read by one index scan that stops there, so a
    word used in every message cannot make a search read them all; its document frequency (its
    weight) still counts every message (``_frequent_df``).
    """
    d = dialect.current()
    # A large namespace's N and summed length, counted less than STATS_CACHE_SECONDS ago (in
    # this process), as fact recall keeps its own: counting every indexed message on every
    # search cost more than the statistics change (a scan growing with the namespace).
    cached = _recent_stats(namespace) if ids is None else None
    # Words this process counted as frequent a moment ago: their newest postings would be read
    # only to be set aside for ``_candidate_postings`` (at a million messages, most of the read).
    known: list[int] = []
    if cached is not None and cached[0] >= STATS_CACHE_MIN_MESSAGES:
        counts = {t: _frequent.get((namespace, t)) for t in terms}
        known = [t for t, n in counts.items() if n is not None]
        rarest = min((n[0] for n in counts.values() if n is not None), default=0)
        if rarest > FREQUENT_CANDIDATE_POSTINGS:
            known = []  # none of them may pick (``_picking``): their newest postings are read
    read_terms = [t for t in terms if t not in known]
    sql, params = _gather_statement(d, namespace, read_terms, ids, window, counted=cached is None)
    found = _Index()
    if cached is not None:
        found.total, found.total_terms = cached
    with d.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    per_term: dict[int, list[tuple[int, int, int, int]]] = defaultdict(list)
    read = 0
    for row in rows:
        kind, a, b, c, d = row
        if kind == 3:  # (session, seq, term, tf): integers from either driver
            per_term[c].append(row[1:])
            read += 1
        elif kind == 4:
            found.lengths[(int(a), int(b))] = int(c)
        elif kind == 2:
            found.behind[int(a)] = (int(b), int(c))
        else:
            found.total, found.total_terms = int(a), int(b)
            if ids is None:
                _remember_stats(namespace, found.total, found.total_terms)
    cap = app_settings.MESSAGE_SEARCH_TERM_LIMIT
    # One more than the limit was read: the term is frequent.
    frequent = [*known, *(term for term, postings in per_term.items() if len(postings) > cap)]
    found.df.update((t, len(postings)) for t, postings in per_term.items() if len(postings) <= cap)
    if frequent:
        large = ids is None and found.total >= STATS_CACHE_MIN_MESSAGES
        counted = _frequent_df(namespace, frequent, ids, kept=large)
        found.df.update((term, max(counted.get(term, 0), cap + 1)) for term in frequent)
    if found.df:  # stale statistics: never fewer messages than a term's own count
        found.total = max(found.total, *found.df.values())
    found.all_lengths = read <= NEAR_LENGTHS_LIMIT  # as the statement decided
    picking = _picking(found.df) if frequent else set()
    if picking:
        # The newest postings of a frequent word are no sample of where it is used: a message
        # older than its newest MESSAGE_SEARCH_TERM_LIMIT could never be found (a million
        # messages' evidence recall fell to 0). The messages scored are instead the best by
        # every posting of the rarest query words, weighted by their idf, with their windows.
        weights = {t: bm25.idf(found.total, n) for t, n in found.df.items()}
        found.postings = _candidate_postings(namespace, weights, picking, ids, window)
        found.all_lengths = False
        return found
    for postings in per_term.values():
        if len(postings) > cap:  # a frequent word no rarer one picks for: its newest only
            postings.sort(reverse=True)
            del postings[cap:]
        found.postings.extend(postings)
    return found


#: With a frequent query word, how many messages ``_candidate_postings`` picks for scoring.
FREQUENT_CANDIDATES = 200
#: ... and how many postings it reads to pick them: the rarest words first, the next one only
#: while their postings stay within this, so a word in half of a namespace, whose weight is
#: small, is scored in the windows of the messages picked but picks none. When even the
#: rarest word is in more messages than this, none picks: its newest
#: ``MESSAGE_SEARCH_TERM_LIMIT`` messages and the other words' are scored (then most messages
#: hold the question's words, and the newest come first).
FREQUENT_CANDIDATE_POSTINGS = 20_000


def _picking(df: Mapping[int, int]) -> set[int]:
    """The query terms whose postings pick the messages scored (``FREQUENT_CANDIDATE_POSTINGS``)."""
    picked: set[int] = set()
    read = 0
    for term, n in sorted(df.items(), key=lambda item: (item[1], item[0])):
        if read + n > FREQUENT_CANDIDATE_POSTINGS:
            break
        picked.add(term)
        read += n
    return picked


def _candidate_postings(
    namespace: str,
    weights: Mapping[int, float],
    picking: Set[int],
    ids: list[int] | None,
    window: int,
) -> list[tuple[int, int, int, int]]:
    """The postings ``(session, seq, term, tf)`` of the query terms in the windows of the
    ``FREQUENT_CANDIDATES`` messages whose postings of the ``picking`` terms sum the highest
    idf (``weights``), in one statement: every posting of those terms is read through the index
    on ``(term, session, seq)`` (no table row: the sum counts a word once per message, as most
    messages use it once), so the cost grows with those words' postings, not with the
    namespace's other words."""
    d = dialect.current()
    quote = connection.ops.quote_name
    term_table = quote(MessageTerm._meta.db_table)
    session_table = quote(MemorySession._meta.db_table)
    params: dict[str, Any] = {
        "ns": namespace,
        "window": window,
        "top": FREQUENT_CANDIDATES,
    }
    terms = sorted(weights)
    weighted = d.table(
        {
            "t": terms,
            "w": [round(weights[t] * 1000) for t in terms],
            "pick": [int(t in picking) for t in terms],
        },
        params,
    )
    only = ""
    if ids is not None:
        only = " AND " + d.one_of("p.session_id", "session", ids, params, kind="bigint")
    sql = (
        f"WITH w AS ({weighted}), top AS (SELECT p.session_id, p.seq FROM {term_table} p "
        "JOIN w ON p.term = w.t AND w.pick = 1 WHERE p.session_id IN "
        f"(SELECT id FROM {session_table} WHERE namespace = %(ns)s){only} "
        "GROUP BY p.session_id, p.seq ORDER BY SUM(w.w) DESC, p.session_id DESC, p.seq DESC "
        "LIMIT %(top)s) "
        # top, then w, then the postings: each window one index range per word (SQLite keeps
        # a CROSS JOIN's order; it read every posting of each word otherwise, 400 ms at 10,000).
        "SELECT DISTINCT p.session_id, p.seq, p.term, p.tf FROM top CROSS JOIN w "
        f"JOIN {term_table} p ON p.term = w.t AND p.session_id = top.session_id "
        "AND p.seq BETWEEN top.seq - %(window)s AND top.seq + %(window)s"
    )
    with d.cursor() as cursor:
        cursor.execute(sql, params)
        return [(int(s), int(q), int(t), int(tf)) for s, q, t, tf in cursor.fetchall()]


_frequent = bm25.KeptStats()


def _frequent_df(
    namespace: str, terms: list[int], ids: list[int] | None, *, kept: bool
) -> dict[int, int]:
    """The document frequencies of ``terms``, each found in more messages than
    ``MESSAGE_SEARCH_TERM_LIMIT``: counted by one statement (every posting of those terms, so
    a scan growing with them), and in a large namespace (``kept``) kept ``bm25.KEPT_SECONDS``
    per word, as its N is: a search of a word used in most of a million messages counts it
    once per interval, not every time."""
    counts: dict[int, int] = {}
    missing = []
    for term in terms:
        known = _frequent.get((namespace, term)) if kept else None
        if known is None:
            missing.append(term)
        else:
            counts[term] = known[0]
    if not missing:
        return counts
    d = dialect.current()
    params: dict[str, Any] = {"ns": namespace}
    wanted = d.one_of("term", "term", missing, params, kind="bigint")
    only = ""
    if ids is not None:
        only = " AND " + d.one_of("session_id", "session", ids, params, kind="bigint")
    table = connection.ops.quote_name(MessageTerm._meta.db_table)
    sessions = connection.ops.quote_name(MemorySession._meta.db_table)
    # The namespace as its sessions, not as the postings' own namespace column: the index
    # (term, session, seq) then holds all the count reads (no table row per posting; 3x faster
    # at 30,000 postings once vacuumed). A posting's namespace is its session's.
    with d.cursor() as cursor:
        cursor.execute(
            f"SELECT term, COUNT(*) FROM {table} WHERE {wanted}{only} AND session_id IN "
            f"(SELECT id FROM {sessions} WHERE namespace = %(ns)s) GROUP BY term",
            params,
        )
        for term, n in cursor.fetchall():
            counts[int(term)] = int(n)
            if kept:
                _frequent.put((namespace, int(term)), int(n))
    return counts


#: The candidate statement returns the lengths of the messages around the query terms' postings
#: when there are at most this many postings (each one an index lookup of its window); past it
#: a query of frequent words read thousands of lengths of which the scoring used a few dozen,
#: and ``keyword_scores`` reads those of its best candidates in a second statement instead.
NEAR_LENGTHS_LIMIT = 300


def entry_lengths(namespace: str, keys: Iterable[SessionSeq]) -> dict[SessionSeq, int]:
    """The indexed length (``term_count``) of the messages ``keys`` that are indexed, in one
    statement: the keys as a table (one text for any number on PostgreSQL, prepared), each an
    index lookup."""
    wanted = sorted(set(keys))
    if not wanted:
        return {}
    d = dialect.current()
    params: dict[str, Any] = {"ns": namespace}
    given = d.table({"s": [s for s, _ in wanted], "q": [q for _, q in wanted]}, params)
    entry = d.join_each(
        "e",
        connection.ops.quote_name(MessageEntry._meta.db_table),
        where="e.session_id = k.s AND e.seq = k.q AND e.namespace = %(ns)s",
        columns="e.session_id, e.seq, e.term_count",
    )
    with d.cursor() as cursor:
        cursor.execute(f"SELECT e.session_id, e.seq, e.term_count FROM ({given}) k {entry}", params)
        return {(int(s), int(q)): int(n) for s, q, n in cursor.fetchall()}


#: Namespaces with at least this many indexed messages keep their BM25 statistics (N and the
#: summed length) for ``bm25.KEPT_SECONDS`` in each process, as fact recall does
#: (``recall.STATS_CACHE_MIN_FACTS``); smaller ones are counted by every search.
STATS_CACHE_MIN_MESSAGES = 2000
_stats = bm25.KeptStats()


def _recent_stats(namespace: str) -> tuple[int, int] | None:
    cached = _stats.get(namespace)
    return None if cached is None else (cached[0], cached[1])


def _remember_stats(namespace: str, total: int, total_terms: int) -> None:
    if total < STATS_CACHE_MIN_MESSAGES:
        _stats.drop(namespace)
    else:
        _stats.put(namespace, total, total_terms)


def _gather_statement(
    d: Dialect,
    namespace: str,
    terms: list[int],
    ids: list[int] | None,
    window: int,
    *,
    counted: bool = True,
) -> tuple[str, dict[str, Any]]:
    """``_gather``'s statement and its parameters. The newest postings of each query term, one
    more than ``MESSAGE_SEARCH_TERM_LIMIT`` (kind 3: one index scan per term, on
    ``(term, session, seq)``, that stops there; a term with that many is frequent and
    ``_gather`` counts it apart); ``counted``: also the index's N and summed length (kind 0);
    the sessions the job is behind on (kind 2). The lengths of the messages around the
    postings (kind 4) are looked up per posting (``Dialect.join_each``: a hash join read every
    indexed message of the table), when there are at most ``NEAR_LENGTHS_LIMIT`` postings;
    else ``keyword_scores`` reads those of its best candidates afterwards (``entry_lengths``)."""
    quote = connection.ops.quote_name
    entry_table = quote(MessageEntry._meta.db_table)
    term_table = quote(MessageTerm._meta.db_table)
    session_table = quote(MemorySession._meta.db_table)
    params: dict[str, Any] = {
        "ns": namespace,
        "cap": app_settings.MESSAGE_SEARCH_TERM_LIMIT + 1,
        "window": window,
        "near": NEAR_LENGTHS_LIMIT,
    }
    only = only_session = ""
    if ids is not None:
        only = " AND " + d.one_of("session_id", "session", ids, params, kind="bigint")
        only_session = " AND " + d.one_of("id", "session", ids, params, kind="bigint")
    if not terms:  # every query word is known to be frequent (``_gather``)
        newest = "SELECT 0 AS term, 0 AS session_id, 0 AS seq, 0 AS tf WHERE 0 = 1"
    elif d.arrays:  # PostgreSQL: migration 0025's function, one call (its FUNCTION's comment)
        params["term"] = dialect.array(terms, "bigint")
        params["in"] = params.get("session")  # the sessions' array ``only`` bound, or NULL
        newest = (
            "SELECT term, session_id, seq, tf FROM ttmemory_newest_postings("
            "%(term)s::bigint[], %(ns)s::text, %(cap)s::integer, %(in)s::bigint[])"
        )
    else:
        newest = d.first_each(
            "term",
            terms,
            params,
            table=term_table,
            where="term = {value} AND namespace = %(ns)s" + only,
            columns="session_id, seq, tf",
            order="session_id DESC, seq DESC",
            limit="%(cap)s",
        )
    count = (
        f"SELECT 0, COUNT(*), COALESCE(SUM(term_count), 0), 0, 0 FROM {entry_table} "
        f"WHERE namespace = %(ns)s{only} UNION ALL "
        if counted
        else ""
    )
    near = d.join_each(
        "e",
        entry_table,
        where="e.session_id = p.session_id "
        "AND e.seq BETWEEN p.seq - %(window)s AND p.seq + %(window)s",
        columns="e.session_id, e.seq, e.term_count",
    )
    sql = (
        f"WITH {d.materialized('p', newest)} "
        f"{count}SELECT 2, id, indexed_upto_seq, last_seq, 0 FROM {session_table} "
        f"WHERE namespace = %(ns)s AND indexed_upto_seq < last_seq{only_session} "
        "UNION ALL SELECT 3, session_id, seq, term, tf FROM p "
        "UNION ALL SELECT DISTINCT 4, e.session_id, e.seq, e.term_count, 0 "
        "FROM (SELECT DISTINCT session_id, seq FROM p "
        f"WHERE (SELECT COUNT(*) FROM p) <= %(near)s) p {near}"
    )
    return sql, params


def pending_entries(
    namespace: str, session_ids: list[int] | None = None
) -> dict[SessionSeq, tuple[int, dict[int, int]]]:
    """The entries the ``message_index`` job has yet to write: ``(session, seq) -> (term count,
    {term hash: tf})`` of each stored message with text past its session's ``indexed_upto_seq``
    and without an entry, computed as the job would (``entry_postings``). Reads only.

    What makes ``message_search`` complete while the index is behind: about
    ``MESSAGE_INDEX_EVERY`` messages per active session while the job keeps up, decrypted and
    hashed per search. Every such message here; ``message_search`` scores the newest
    ``MESSAGE_SEARCH_PENDING_LIMIT`` of them. Nothing while ``MESSAGE_SEARCH_INDEX`` is off
    (then nothing new is searchable either).
    """
    behind = MemorySession.objects.filter(namespace=namespace, indexed_upto_seq__lt=F("last_seq"))
    if session_ids is not None:
        behind = behind.filter(pk__in=session_ids)
    rows = behind.values_list("pk", "indexed_upto_seq", "last_seq")
    marks = {pk: (upto, last) for pk, upto, last in rows}
    return _pending(namespace, marks, None)[0]


def _pending(
    namespace: str, behind: Mapping[int, tuple[int, int]], limit: int | None
) -> tuple[dict[SessionSeq, tuple[int, dict[int, int]]], int | None]:
    """``pending_entries`` of the sessions ``behind`` (session -> (indexed up to, last seq)),
    the newest ``limit`` seqs only (newest sessions first); and a session left out in part
    (None when nothing was)."""
    if not app_settings.MESSAGE_SEARCH_INDEX or not behind:
        return {}, None
    past = Q()
    cut: int | None = None
    remaining = limit
    for session_id in sorted(behind, reverse=True):
        upto, last = behind[session_id]
        if remaining is not None:
            if remaining <= 0:
                cut = session_id
                break
            if last - upto > remaining:
                cut = session_id
                upto = last - remaining
            remaining -= last - upto
        past |= Q(session_id=session_id, seq__gt=upto)
    if not past:  # every session left out (a limit of 0): an empty Q() would match every row
        return {}, cut
    indexed = MessageEntry.objects.filter(session_id=OuterRef("session_id"), seq=OuterRef("seq"))
    # Past the marks the index read saw: a message with an entry is left out only when it is
    # still past its session's mark (an entry that outlived a restore, whose postings that read
    # had). One the index job wrote since, with the mark moved over it in the same
    # transaction, was in neither read: it is scored here, as still unindexed.
    rows = Message.objects.filter(past).exclude(
        Exists(indexed), seq__gt=F("session__indexed_upto_seq")
    )
    # The unindexed messages' keys first (nothing decrypted); the postings of those this
    # process has not hashed yet next, kept by message id, the authentication tag of its sealed
    # value (its last 16 bytes, one per sealing: SQLite can give a rolled-back insert's id to
    # the next message) and the index version (a key or language change). A lagging index then
    # costs each later search a read of keys, not a decryption and hashing of every pending
    # message (about 30 us each).
    version = blind.index_version(namespace)
    data = f"{connection.ops.quote_name(Message._meta.db_table)}.data"
    tag = RawSQL(f"substr({data}, length({data}) - 15, 16)", [])
    keys = list(rows.annotate(tag=tag).values_list("pk", "session_id", "seq", "tag"))
    out: dict[SessionSeq, tuple[int, dict[int, int]]] = {}
    missing: dict[int, tuple[int, bytes, str]] = {}
    for pk, session_id, seq, sealed in keys:
        key = (pk, bytes(sealed), version)
        kept = _pending_postings.get(key)
        if kept is None:
            missing[pk] = key
        elif kept[1]:  # a message without text has no postings
            out[(session_id, seq)] = kept
    if missing:
        memo: dict[str, int] = {}
        if len(_pending_postings) + len(missing) > PENDING_POSTINGS_KEPT:
            _pending_postings.clear()
        read = Message.objects.filter(pk__in=list(missing))
        for pk, session_id, seq, data in read.values_list("pk", "session_id", "seq", "data"):
            text = message_text(data)
            counts = entry_postings(text, namespace=namespace, memo=memo) if text.strip() else {}
            entry = _pending_postings[missing[pk]] = (sum(counts.values()), counts)
            if counts:
                out[(session_id, seq)] = entry
    return out, cut


#: Postings of unindexed messages kept per process for the searches that score them again
#: (``_pending``): keyed term hashes and counts, as the index itself stores, never text.
PENDING_POSTINGS_KEPT = 20_000
_pending_postings: dict[tuple[int, bytes, str], tuple[int, dict[int, int]]] = {}


def vector_scores(
    entries: QuerySet[MessageEntry], vector: list[float], model: str, limit: int
) -> dict[SessionSeq, float]:
    """Cosine similarity of the ``limit`` messages closest to ``vector`` (embedded by ``model``)."""
    entries = entries.filter(embedding_model=model, embedding_dim=len(vector))
    if vector_storage(connection) == PGVECTOR:
        literal = "[" + ",".join(repr(float(v)) for v in vector) + "]"
        distance = RawSQL("embedding <=> %s::vector", [literal])
        rows = entries.annotate(distance=distance).order_by("distance")
        return {
            (s, q): 1.0 - float(d)
            for s, q, d in rows.values_list("session_id", "seq", "distance")[:limit]
        }
    blob = RawSQL(f"{connection.ops.quote_name(MessageEntry._meta.db_table)}.embedding", [])
    triples = list(entries.annotate(blob=blob).values_list("session_id", "seq", "blob"))
    if not triples:
        return {}
    raw = b"".join(bytes(b) for _, _, b in triples)
    matrix = np.frombuffer(raw, dtype="<f4").reshape(len(triples), len(vector))
    sims = matrix @ np.asarray(vector, dtype=np.float32)
    top = np.argsort(-sims)[:limit]
    return {(triples[i][0], triples[i][1]): float(sims[i]) for i in top}


def entry_postings(
    text: str, *, namespace: str, memo: dict[str, int] | None = None
) -> dict[int, int]:
    """Keyed term hashes of a message's text with their counts (capped for the column).

    Each distinct term is hashed once; ``memo`` (term -> hash, one namespace) carries the
    hashes over the messages of one append.
    """
    memo = {} if memo is None else memo
    postings: dict[int, int] = {}
    hash_term = None
    for term, count in Counter(blind.terms(text, namespace=namespace)).items():
        hashed = memo.get(term)
        if hashed is None:
            if hash_term is None:
                hash_term = blind.term_hasher(namespace)
            hashed = memo[term] = hash_term(term)
        postings[hashed] = min(postings.get(hashed, 0) + count, 32767)
    return postings
