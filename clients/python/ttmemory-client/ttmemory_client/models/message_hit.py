from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.context_message import ContextMessage


T = TypeVar("T", bound="MessageHit")


@_attrs_define
class MessageHit:
    """
    Attributes:
        session (int): Session id.
        session_key (str):
        seq (int):
        score (float):
        archived (bool):
        created_at (datetime.datetime):
        message (Any): Chat Completions message.
        context (list[ContextMessage]): Neighbouring messages of the session, in order.
    """

    session: int
    session_key: str
    seq: int
    score: float
    archived: bool
    created_at: datetime.datetime
    message: Any
    context: list[ContextMessage]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        session = self.session

        session_key = self.session_key

        seq = self.seq

        score = self.score

        archived = self.archived

        created_at = self.created_at.isoformat()

        message = self.message

        context = []
        for context_item_data in self.context:
            context_item = context_item_data.to_dict()
            context.append(context_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "session": session,
                "session_key": session_key,
                "seq": seq,
                "score": score,
                "archived": archived,
                "created_at": created_at,
                "message": message,
                "context": context,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.context_message import ContextMessage  # noqa: PLC0415

        d = dict(src_dict)
        session = d.pop("session")

        session_key = d.pop("session_key")

        seq = d.pop("seq")

        score = d.pop("score")

        archived = d.pop("archived")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        message = d.pop("message")

        context = []
        _context = d.pop("context")
        for context_item_data in _context:
            context_item = ContextMessage.from_dict(context_item_data)

            context.append(context_item)

        message_hit = cls(
            session=session,
            session_key=session_key,
            seq=seq,
            score=score,
            archived=archived,
            created_at=created_at,
            message=message,
            context=context,
        )

        message_hit.additional_properties = d
        return message_hit

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
