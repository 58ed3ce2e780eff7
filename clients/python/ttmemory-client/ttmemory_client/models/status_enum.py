from typing import Literal

StatusEnum = Literal["done", "failed", "queued", "running"]

STATUS_ENUM_VALUES: set[StatusEnum] = {
    "done",
    "failed",
    "queued",
    "running",
}


def check_status_enum(value: str) -> StatusEnum:
    if value in STATUS_ENUM_VALUES:
        return value
    raise TypeError(f"Unexpected value {value!r}. Expected one of {STATUS_ENUM_VALUES!r}")
