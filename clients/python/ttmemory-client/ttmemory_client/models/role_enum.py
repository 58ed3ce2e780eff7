from typing import Literal

RoleEnum = Literal["assistant", "developer", "function", "system", "tool", "user"]

ROLE_ENUM_VALUES: set[RoleEnum] = {
    "assistant",
    "developer",
    "function",
    "system",
    "tool",
    "user",
}


def check_role_enum(value: str) -> RoleEnum:
    if value in ROLE_ENUM_VALUES:
        return value
    raise TypeError(f"Unexpected value {value!r}. Expected one of {ROLE_ENUM_VALUES!r}")
