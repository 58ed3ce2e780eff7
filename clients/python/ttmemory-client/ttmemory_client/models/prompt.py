from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.prompt_empty import PromptEmpty
    from ..models.prompt_messages_item import PromptMessagesItem
    from ..models.prompt_tokens import PromptTokens


T = TypeVar("T", bound="Prompt")


@_attrs_define
class Prompt:
    """
    Attributes:
        system (str):
        messages (list[PromptMessagesItem]):
        tokens (PromptTokens):
        total (int):
        recall_mode (str):
        empty (PromptEmpty): Why each empty section is empty: not asked, no query, nothing stored, nothing relevant, all
            in window or over budget.
    """

    system: str
    messages: list[PromptMessagesItem]
    tokens: PromptTokens
    total: int
    recall_mode: str
    empty: PromptEmpty
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        system = self.system

        messages = []
        for messages_item_data in self.messages:
            messages_item = messages_item_data.to_dict()
            messages.append(messages_item)

        tokens = self.tokens.to_dict()

        total = self.total

        recall_mode = self.recall_mode

        empty = self.empty.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "system": system,
                "messages": messages,
                "tokens": tokens,
                "total": total,
                "recall_mode": recall_mode,
                "empty": empty,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.prompt_empty import PromptEmpty  # noqa: PLC0415
        from ..models.prompt_messages_item import PromptMessagesItem  # noqa: PLC0415
        from ..models.prompt_tokens import PromptTokens  # noqa: PLC0415

        d = dict(src_dict)
        system = d.pop("system")

        messages = []
        _messages = d.pop("messages")
        for messages_item_data in _messages:
            messages_item = PromptMessagesItem.from_dict(messages_item_data)

            messages.append(messages_item)

        tokens = PromptTokens.from_dict(d.pop("tokens"))

        total = d.pop("total")

        recall_mode = d.pop("recall_mode")

        empty = PromptEmpty.from_dict(d.pop("empty"))

        prompt = cls(
            system=system,
            messages=messages,
            tokens=tokens,
            total=total,
            recall_mode=recall_mode,
            empty=empty,
        )

        prompt.additional_properties = d
        return prompt

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
