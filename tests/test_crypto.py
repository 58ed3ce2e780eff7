"""Encryption at rest: keyring, associated data, wrong keys and tampering."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import FieldError, ImproperlyConfigured
from django.db import connection, models

from tests.conftest import raw_rows, user
from ttmemory import memory
from ttmemory.crypto import Keyring, generate_key, key_id_of, parse_key
from ttmemory.exceptions import DecryptionError, EncryptionKeyError
from ttmemory.fields import EncryptedJSONField, EncryptedTextField, encrypt
from ttmemory.models import MemorySession, Message


def test_the_first_key_encrypts_and_every_key_decrypts() -> None:
    old, new = generate_key("old"), generate_key("new")
    blob = Keyring.from_entries([old]).encrypt(b"hello", b"t.c")

    ring = Keyring.from_entries([new, old])
    assert ring.decrypt(blob, b"t.c") == b"hello"
    assert key_id_of(ring.encrypt(b"hello", b"t.c")) == "new"


def test_a_value_moved_to_another_column_or_tampered_does_not_decrypt() -> None:
    ring = Keyring.from_entries([generate_key()])
    blob = ring.encrypt(b"secret", b"ttmemory:a.data")

    with pytest.raises(DecryptionError, match="another column"):
        ring.decrypt(blob, b"ttmemory:b.data")
    tampered = blob[:-1] + bytes([blob[-1] ^ 1])
    with pytest.raises(DecryptionError):
        ring.decrypt(tampered, b"ttmemory:a.data")


def test_a_value_under_an_unknown_key_names_the_key() -> None:
    blob = Keyring.from_entries([generate_key("gone")]).encrypt(b"x", b"aad")

    with pytest.raises(DecryptionError, match="'gone'"):
        Keyring.from_entries([generate_key("k1")]).decrypt(blob, b"aad")


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("no-colon", "key_id:base64"),
        ("bad id!:AAAA", "key id"),
        ("k1:not*base64", "base64"),
        ("k1:AAAA", "32"),
    ],
)
def test_malformed_keys_are_refused_with_a_reason(entry: str, message: str) -> None:
    with pytest.raises(EncryptionKeyError, match=message):
        parse_key(entry)


def test_duplicate_key_ids_are_refused() -> None:
    with pytest.raises(EncryptionKeyError, match="twice"):
        Keyring.from_entries([generate_key("k1"), generate_key("k1")])


def test_reading_with_the_wrong_key_raises_instead_of_returning_ciphertext(
    session: MemorySession, settings: Any
) -> None:
    memory.message_add(session=session, message=user("hello"))
    settings.TTMEMORY = {**settings.TTMEMORY, "ENCRYPTION_KEYS": [generate_key("t1")]}

    with pytest.raises(DecryptionError):
        memory.message_recent(session=session)


def test_no_key_configured_is_a_clear_configuration_error(
    session: MemorySession, settings: Any
) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "ENCRYPTION_KEYS": None}

    with pytest.raises(ImproperlyConfigured, match="ENCRYPTION_KEYS"):
        memory.message_add(session=session, message=user("hello"))


def test_json_types_empty_string_and_null_survive_exactly(session: MemorySession) -> None:
    value = {"role": "user", "content": "", "n": 1, "f": 1.0, "b": False, "z": None, "l": [1, "1"]}
    memory.message_add(session=session, message=value)
    stored = memory.message_recent(session=session)[0]

    assert stored == value
    assert type(stored["n"]) is int and type(stored["f"]) is float

    session.summary = ""
    session.save()
    assert MemorySession.objects.get(pk=session.pk).summary == ""
    session.summary = None
    session.save()
    assert MemorySession.objects.get(pk=session.pk).summary is None
    table = connection.ops.quote_name(MemorySession._meta.db_table)
    assert raw_rows(f"SELECT summary FROM {table}") == [(None,)]


def test_encrypted_fields_refuse_lookups_other_than_isnull(session: MemorySession) -> None:
    assert Message.objects.filter(data__isnull=True).count() == 0
    with pytest.raises(FieldError, match="encrypted"):
        list(Message.objects.filter(data="x"))
    with pytest.raises(FieldError, match="encrypted"):
        list(Message.objects.filter(data__role="user"))
    with pytest.raises(FieldError, match="encrypted"):
        list(MemorySession.objects.filter(summary__icontains="x"))


@pytest.mark.parametrize("option", ["unique", "db_index", "primary_key"])
def test_encrypted_fields_refuse_unique_and_indexes(option: str) -> None:
    with pytest.raises(ImproperlyConfigured, match=option):
        EncryptedTextField(**{option: True})


def test_encrypt_wraps_familiar_fields() -> None:
    text = encrypt(models.TextField(null=True, blank=True))
    data = encrypt(models.JSONField(default=dict))

    assert isinstance(text, EncryptedTextField) and text.null and text.blank
    assert isinstance(data, EncryptedJSONField) and data.default is dict
    with pytest.raises(ImproperlyConfigured):
        encrypt(models.IntegerField())


def test_integers_beyond_64_bits_and_digit_strings_round_trip_exactly(
    session: MemorySession,
) -> None:
    value = {
        "role": "user",
        "content": "order 12345678901234567890",
        "big": 123456789012345678901234567890,
        "neg": -9223372036854775809,
        "max": 18446744073709551615,
    }
    memory.message_add(session=session, message=value)

    stored = memory.message_recent(session=session)[0]
    assert stored == value
    assert type(stored["big"]) is int and type(stored["neg"]) is int


def test_bound_fields_read_the_same_through_every_queryset_shape(
    session: MemorySession, django_assert_num_queries: Any
) -> None:
    memory.message_add_many(session=session, messages=[user("one"), user("two")])
    live = Message.objects.filter(session=session).order_by("seq")

    with django_assert_num_queries(1):
        assert [m["content"] for m in live.values_list("data", flat=True)] == ["one", "two"]
    with django_assert_num_queries(1):
        assert [
            (r.seq, r.data["content"]) for r in live.values_list("seq", "data", named=True)
        ] == [
            (1, "one"),
            (2, "two"),
        ]
    with django_assert_num_queries(1):
        rows = list(live.values("data"))
    assert rows == [{"data": user("one")}, {"data": user("two")}]  # no binding columns added
    with django_assert_num_queries(1):
        assert [m.data["content"] for m in live.only("data")] == ["one", "two"]
    with django_assert_num_queries(2):  # a deferred column loads with its binding: one query
        first = live.defer("data", "namespace").first()
        assert first is not None and first.data == user("one")

    # A plain value through QuerySet.update() is sealed for each row it lands in.
    assert live.update(data={"role": "user", "content": "same"}) == 2
    assert [m["content"] for m in memory.message_recent(session=session)] == ["same", "same"]
