"""The blind keyword index: keyed HMACs of normalised terms, so keywords are searchable encrypted.

No plaintext term is stored. The key (``BLIND_INDEX_KEY``) is separate from the encryption
keys: rotating encryption keys leaves the index valid. Each namespace hashes under its own
subkey (HKDF of ``BLIND_INDEX_KEY`` with the namespace), so the same word or the same fact text
has unrelated hashes in two namespaces: comparing postings across tenants reveals nothing.

Every fact records the index it was written with (``Fact.index_version``, see
``index_version``). Facts of the first release (``LEGACY_INDEX_VERSION``, one global key) are
still found: queries hash each word both ways until ``ttmemory_reindex`` has rebuilt them. A
change of key or tokenizer makes facts stale too; ``ttmemory_reindex`` rebuilds them from their
(decrypted) text, and the system check ttmemory.W040 counts them until it has.

Terms are those of the namespace's language (``ttmemory.text.namespace_language``), which is
part of the marker: changing a namespace's language makes only its rows stale.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.db.models import Q
from django.dispatch import receiver

from ttmemory.conf import app_settings
from ttmemory.crypto import decode_key_material, derive_key
from ttmemory.longterm import rulebook, slots, statements
from ttmemory.text import namespace_language, normalise_terms, normalise_text, normaliser_version

if TYPE_CHECKING:
    from django.db.models import QuerySet

#: The scheme of the postings: 2 = one HKDF subkey per namespace. The first release (one global
#: key for every namespace) wrote no marker: ``LEGACY_INDEX_VERSION``.
INDEX_SCHEME = 2
#: Bump when ``ttmemory.text.normalise_text`` changes what it returns; a change of
#: ``normalise_terms`` (its ``NORMALISER_VERSION`` or the namespace's language) is part of the
#: marker by itself. Every fact is then stale until ``ttmemory_reindex`` has rebuilt its postings.
TOKENIZER_VERSION = 1
LEGACY_INDEX_VERSION = ""
NAMESPACE_KEY_CACHE = 4096

_key: bytes | None = None
_namespace_keys: dict[str, bytes] = {}
_versions: dict[str, str] = {}


def parse_blind_key(value: object) -> bytes:
    """Decode ``BLIND_INDEX_KEY`` (base64 of at least 32 bytes); ValueError if malformed."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError("must be a base64 string of 32 random bytes")
    try:
        raw = decode_key_material(value)
    except ValueError as exc:
        raise ValueError("is not valid base64") from exc
    if len(raw) < 32:
        raise ValueError(f"decodes to {len(raw)} bytes; at least 32 are needed")
    return raw


def blind_key() -> bytes:
    global _key
    if _key is None:
        value = app_settings.BLIND_INDEX_KEY
        if not value:
            raise ImproperlyConfigured(
                "ttmemory needs TTMEMORY['BLIND_INDEX_KEY'] (or TTMEMORY_BLIND_INDEX_KEY) for "
                "long-term memory: base64 of 32 random bytes, separate from the encryption keys"
            )
        try:
            _key = parse_blind_key(value)
        except ValueError as exc:
            raise ImproperlyConfigured(f"TTMEMORY['BLIND_INDEX_KEY'] {exc}") from exc
    return _key


def reset_blind_key() -> None:
    global _key
    _key = None
    _versions.clear()
    _namespace_keys.clear()


@receiver(setting_changed)
def _reset_on_settings_change(*, setting: str, **kwargs: Any) -> None:
    if setting == "TTMEMORY":
        reset_blind_key()


def namespace_key(namespace: str) -> bytes:
    """The subkey of ``namespace``: HKDF-SHA256 of ``BLIND_INDEX_KEY`` with the namespace."""
    key = _namespace_keys.get(namespace)
    if key is None:
        purpose = b"ttmemory/blind-index/v2/namespace\x00" + namespace.encode("utf-8")
        key = derive_key(blind_key(), purpose=purpose)
        if len(_namespace_keys) >= NAMESPACE_KEY_CACHE:
            _namespace_keys.clear()
        _namespace_keys[namespace] = key
    return key


def fact_index_version(namespace: str | None = None) -> str:
    """``index_version`` of a fact's postings: also a fingerprint of the words the rule files
    add to a fact's terms (``fact_terms``: its slot's words, its kinds), so that a fact indexed
    before they changed is stale and ``ttmemory_reindex`` gives it the words of today."""
    scheme, rest = index_version(namespace).split(".", 1)
    return f"{scheme}.{_added_words_mark()}{rest}"


@functools.cache
def _added_words_mark() -> str:
    """Four hex digits of a hash of every shipped rule file's slot words and kinds."""
    digest = hashlib.sha256()
    for lang in rulebook.languages():
        digest.update(repr((lang.code, sorted(lang.slot_words.items()), lang.kinds)).encode())
    return "w" + digest.hexdigest()[:4]


def index_version(namespace: str | None = None) -> str:
    """The marker of postings written now in ``namespace``: scheme, tokenizer and language,
    and a fingerprint of the key (no namespace: the default language's).

    The fingerprint (32 bits of an HMAC of a constant) tells a key change apart and reveals
    nothing of the key. A row whose marker differs is stale (``ttmemory_reindex``).
    """
    language = namespace_language(namespace) if namespace is not None else None
    version = _versions.get(language or "")
    if version is None:
        mac = hmac.new(blind_key(), b"ttmemory/blind-index/fingerprint", hashlib.sha256)
        tokenizer = f"{TOKENIZER_VERSION}-{normaliser_version(language)}"
        version = _versions[language or ""] = f"{INDEX_SCHEME}.{tokenizer}.{mac.hexdigest()[:8]}"
    return version


def terms(text: str, *, namespace: str) -> list[str]:
    """The terms of ``text`` in ``namespace``'s language (``normalise_terms``)."""
    return normalise_terms(text, language=namespace_language(namespace))


def _hash64(key: bytes, message: bytes) -> int:
    digest = hmac.new(key, message, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def term_hash(term: str, *, namespace: str) -> int:
    """A normalised term's keyed hash in ``namespace``, as a signed 64-bit integer (a BIGINT)."""
    return _hash64(namespace_key(namespace), b"t:" + term.encode("utf-8"))


def term_hasher(namespace: str) -> Callable[[str], int]:
    """``term_hash`` for many terms of one namespace: each hash copies one keyed HMAC state
    (key schedule and the ``t:`` prefix done once), about half the cost of a new HMAC each
    time (measured, Python 3.11)."""
    keyed = hmac.new(namespace_key(namespace), b"t:", hashlib.sha256)

    def hash_term(term: str) -> int:
        mac = keyed.copy()
        mac.update(term.encode("utf-8"))
        return int.from_bytes(mac.digest()[:8], "big", signed=True)

    return hash_term


def legacy_term_hash(term: str) -> int:
    """A term's hash in the first release's index (one key for every namespace)."""
    return _hash64(blind_key(), b"t:" + term.encode("utf-8"))


def term_counts(text: str, *, namespace: str) -> Counter[int]:
    """Keyed hashes of the terms of ``text`` in ``namespace``, with how often each occurs."""
    hash_term = term_hasher(namespace)
    return Counter(hash_term(term) for term in terms(text, namespace=namespace))


def fact_postings(text: str, *, slot: str = "", namespace: str) -> tuple[Counter[int], int]:
    """A fact's postings and its length: the keyed hashes of ``fact_terms`` with their counts.
    The length counts the text's terms only, so the words added never make BM25 take the fact
    for a longer one: "Der Nutzer ist Lehrer" is found by "Beruf", and by "Lehrer" as before."""
    said, added = fact_terms(text, slot=slot, namespace=namespace)
    hash_term = term_hasher(namespace)
    counts = Counter(hash_term(term) for term in said)
    length = sum(counts.values())
    for term in added:
        counts[hash_term(term)] = 1
    return counts, length


def fact_terms(text: str, *, slot: str = "", namespace: str) -> tuple[list[str], list[str]]:
    """The terms a fact is indexed by: those of ``text``, and, once each, the words it does not
    hold that name the attribute it sets (``slots.words``: "city", "город", "Wohnort", "城市"
    for a ``location``; the slot ``statements.infer_slot`` reads in the text when none is
    given) and the kinds it names a member of (``kind_terms``: "instrument" for "cello")."""
    said = terms(text, namespace=namespace)
    named = slot or statements.infer_slot(text)
    extra = [t for word in slots.words(named) for t in terms(word, namespace=namespace)]
    extra += kind_terms(said, language=namespace_language(namespace))
    held = set(said)
    return said, [t for t in dict.fromkeys(extra) if t not in held]


def kind_terms(said: list[str], *, language: str) -> list[str]:
    """The terms of the kinds (the rule files' ``[[kind]]``) whose members ``said`` (a text's
    terms) names: all of a member's terms, in ``language``'s normalisation."""
    members = _kind_members(language)
    present = set(said)
    found: list[str] = []
    for term in dict.fromkeys(said):
        for rest, named in members.get(term, ()):
            if rest <= present:
                found.extend(named)
    return list(dict.fromkeys(found))


@functools.lru_cache(maxsize=8)
def _kind_members(
    language: str,
) -> dict[str, tuple[tuple[frozenset[str], tuple[str, ...]], ...]]:
    """A member's first term -> (its other terms, the terms of its kind's names), per member."""
    found: dict[str, list[tuple[frozenset[str], tuple[str, ...]]]] = {}
    for lang in rulebook.languages():
        for names, members in lang.kinds:
            named = tuple(
                dict.fromkeys(t for n in names for t in normalise_terms(n, language=language))
            )
            for member in members:
                member_terms = normalise_terms(member, language=language)
                if member_terms:
                    found.setdefault(member_terms[0], []).append(
                        (frozenset(member_terms[1:]), named)
                    )
    return {term: tuple(entries) for term, entries in found.items()}


def query_terms(text: str, *, namespace: str) -> list[int]:
    """Distinct keyed hashes of a query's terms in ``namespace``, in order."""
    key = namespace_key(namespace)
    return list(
        dict.fromkeys(
            _hash64(key, b"t:" + term.encode("utf-8")) for term in terms(text, namespace=namespace)
        )
    )


def query_hashes(text: str, *, namespace: str) -> dict[int, int]:
    """Every hash a posting of a query word may carry in ``namespace`` -> that word's hash.

    A word's postings carry its namespace hash, or, in a fact not yet rebuilt by
    ``ttmemory_reindex`` (``LEGACY_INDEX_VERSION``), its first-release hash; both map to the
    namespace hash, which identifies the word (for document frequencies and "every word").
    The first-release hashes only ever match postings that were stored before this release.
    """
    key = namespace_key(namespace)
    hashes: dict[int, int] = {}
    for term in dict.fromkeys(terms(text, namespace=namespace)):
        word = _hash64(key, b"t:" + term.encode("utf-8"))
        hashes[word] = word
        hashes.setdefault(legacy_term_hash(term), word)
    return hashes


def text_hash(text: str, *, namespace: str) -> str:
    """Keyed hash of the normalised text in ``namespace``: equal texts are one fact (upsert key)."""
    normal = normalise_text(text).encode("utf-8")
    return hmac.new(namespace_key(namespace), b"x:" + normal, hashlib.sha256).hexdigest()


def legacy_text_hash(text: str) -> str:
    """The first release's upsert key (one key for every namespace)."""
    normal = normalise_text(text).encode("utf-8")
    return hmac.new(blind_key(), b"x:" + normal, hashlib.sha256).hexdigest()


_Rows = TypeVar("_Rows", bound="QuerySet[Any]")


def stale(rows: _Rows, *, marker: Callable[[str | None], str] = index_version) -> _Rows:
    """Those of ``rows`` (facts or message entries) whose marker is not their namespace's
    (``marker``: ``index_version``, or ``fact_index_version`` for facts).

    Without ``NAMESPACE_LANGUAGES`` one marker is current everywhere. With it, each key's
    namespaces (minus those a more specific key claims, as ``namespace_language`` resolves
    them) must carry the marker of the key's language, and the rest the default marker: a
    condition on the namespace column, so no namespace list is read first.
    """
    default = marker(None)
    overrides = app_settings.NAMESPACE_LANGUAGES
    if not overrides:
        return rows.exclude(index_version=default)
    claimed = Q()
    condition = Q()
    for key in overrides:
        mine = _namespace_match(key)
        for other in overrides:
            if _more_specific(other, than=key):
                mine &= ~_namespace_match(other)
        condition |= mine & ~Q(index_version=marker(key))
        claimed |= _namespace_match(key)
    return rows.filter(condition | (~claimed & ~Q(index_version=default)))


def _namespace_match(key: str) -> Q:
    return Q(namespace__startswith=key[:-1]) if key.endswith("*") else Q(namespace=key)


def _more_specific(other: str, *, than: str) -> bool:
    """Whether key ``other`` wins over key ``than`` for the namespaces both match."""
    if other == than or not than.endswith("*") or not other.startswith(than[:-1]):
        return False
    return not other.endswith("*") or len(other) > len(than)
