"""Cues in Spanish, French and Japanese: a slot said loosely (no pattern reads the sentence) sets
the slot and supersedes its old value; never a clause about someone else, a negated one or a
hypothetical."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import user
from tests.learning.chat import Talk
from ttmemory.longterm import statements

pytestmark = [pytest.mark.contract, pytest.mark.usefixtures("inline_learning")]
NS = "user-cues"


talk = Talk(NS)
chat, current = talk.chat, talk.current


@pytest.mark.parametrize(
    ("said", "slot", "stored"),
    [
        (
            "oye, escríbeme a partir de ahora a lucia.g@proton.me",
            "email",
            "Correo del usuario: lucia.g@proton.me",
        ),
        (
            "cambié de móvil, el nuevo es 612 345 678",
            "phone number",
            "Teléfono del usuario: 612 345 678",
        ),
        (
            "al final nos hemos ido a vivir todos a Granada",
            "location",
            "El usuario vive en Granada",
        ),
        ("por fin encontré trabajo de enfermera", "job", "El usuario trabaja como enfermera"),
        ("me han contratado en Iberdrola", "employer", "El usuario trabaja en Iberdrola"),
        (
            "écris-moi désormais sur claire.d@proton.me",
            "email",
            "E-mail de l'utilisateur : claire.d@proton.me",
        ),
        (
            "pour me joindre, le numéro c'est le 06 12 34 56 78",
            "phone number",
            "Numéro de l'utilisateur : 06 12 34 56 78",
        ),
        ("bon, finalement on s'est posés à Rennes", "location", "L'utilisateur habite à Rennes"),
        ("j'ai signé un CDI chez Decathlon", "employer", "L'utilisateur travaille chez Decathlon"),
        ("j'ai fini par bosser comme infirmière", "job", "L'utilisateur est infirmière"),
        (
            "連絡はkenji.t@docomo.ne.jpにお願いします",
            "email",
            "ユーザーのメールアドレスはkenji.t@docomo.ne.jp",
        ),
        (
            "携帯の番号が変わりました、090-1234-5678です",
            "phone number",
            "ユーザーの電話番号は090-1234-5678",
        ),
        ("転職して、今はソニーで働いています", "employer", "ユーザーはソニーで働いている"),
    ],
)
def test_a_cue_sets_its_slot(said: str, slot: str, stored: str) -> None:
    found = statements.rule_statements([user(said)])

    assert [(s.text, s.slot) for s in found] == [(stored, slot)]


@pytest.mark.parametrize(
    "said",
    [
        "si me mudara a Bilbao, buscaría trabajo en Iberdrola",
        "no vivo en Granada",
        "si je déménageais à Nice, je travaillerais chez Airbus",
        "私の姉は大阪に引っ越しました",
        "もし東京に引っ越したら、楽天で働きたい",
    ],
)
def test_a_cue_never_reads_someone_else_a_negation_or_a_hypothetical(said: str) -> None:
    assert statements.rule_statements([user(said)]) == []


@pytest.mark.parametrize(
    ("said", "stored", "slot"),
    [
        ("mi madre se ha mudado a Valencia", "Madre del usuario vive en Valencia",
         "madre location"),
        ("ma sœur a déménagé à Lille", "Sœur de l'utilisateur habite à Lille", "sœur location"),
    ],
)  # fmt: skip
def test_a_close_persons_move_is_stored_as_theirs_never_the_users(
    said: str, stored: str, slot: str
) -> None:
    found = statements.rule_statements([user(said)])

    assert [(s.text, s.slot) for s in found] == [(stored, slot)]


def test_a_cue_supersedes_the_value_a_pattern_stored(db: Any) -> None:
    chat("trabajo en Inditex", "me han contratado en Iberdrola")
    chat("j'habite à Bordeaux", "bon, finalement on s'est posés à Rennes")

    assert current() == [
        "El usuario trabaja en Iberdrola",
        "L'utilisateur habite à Rennes",
    ]
