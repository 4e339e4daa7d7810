"""A server's request for input (MCP elicitation, form mode) as front ends see it.

The requested schema is flat: each property a string, number, integer, boolean or a choice
of strings. ``fields`` reads it (what it cannot read is reported, and the request declined);
``convert`` turns what the person typed into the value the server gets, or says why not.
No SDK import: front ends use this module.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

FieldKind: TypeAlias = Literal["string", "number", "integer", "boolean", "enum"]
Action: TypeAlias = Literal["accept", "decline", "cancel"]
Value: TypeAlias = str | int | float | bool

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?$")


@dataclass(frozen=True, slots=True)
class ElicitField:
    name: str
    kind: FieldKind
    #: The server's words: untrusted, shown escaped.
    title: str
    description: str = ""
    required: bool = False
    default: Value | None = None
    #: enum: the values, and what to show for each.
    choices: tuple[str, ...] = ()
    choice_titles: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    #: string: "email", "uri", "date" or "date-time" (checked), anything else ignored.
    format: str | None = None


@dataclass(frozen=True, slots=True)
class ElicitationRequest:
    server: str
    #: The server's words: untrusted, shown escaped.
    message: str
    fields: tuple[ElicitField, ...] = ()


@dataclass(frozen=True, slots=True)
class ElicitationAnswer:
    action: Action
    content: dict[str, Value] = field(default_factory=dict)


#: The front end's form: the session awaits its answer.
Elicitor: TypeAlias = Callable[[ElicitationRequest], Awaitable[ElicitationAnswer]]


class SchemaError(ValueError):
    """The requested schema is not one picode can show as a form."""


def fields(schema: Mapping[str, Any]) -> tuple[ElicitField, ...]:
    """The form's fields, in the schema's order; raises ``SchemaError``."""
    properties = schema.get("properties") or {}
    if not isinstance(properties, Mapping):
        raise SchemaError("properties is not an object")
    required = set(schema.get("required") or ())
    out: list[ElicitField] = []
    for name, spec in properties.items():
        if not isinstance(spec, Mapping):
            raise SchemaError(f"property {name!r} is not an object")
        out.append(_field(str(name), spec, name in required))
    return tuple(out)


def _field(name: str, spec: Mapping[str, Any], required: bool) -> ElicitField:
    kind = spec.get("type")
    title = str(spec.get("title") or name)
    description = str(spec.get("description") or "")
    common: dict[str, Any] = {"title": title, "description": description, "required": required}
    choices = spec.get("enum")
    one_of = spec.get("oneOf")
    if kind == "string" and (choices or one_of):
        if one_of:
            values = tuple(str(item.get("const")) for item in one_of if isinstance(item, Mapping))
            titles = tuple(
                str(item.get("title") or item.get("const"))
                for item in one_of
                if isinstance(item, Mapping)
            )
        else:
            values = tuple(str(value) for value in choices or ())
            names = spec.get("enumNames")
            titles = tuple(str(n) for n in names) if names else values
        default = spec.get("default")
        return ElicitField(
            name,
            "enum",
            choices=values,
            choice_titles=titles if len(titles) == len(values) else values,
            default=default if default in values else None,
            **common,
        )
    if kind == "string":
        return ElicitField(
            name,
            "string",
            default=_typed(spec.get("default"), str),
            min_length=_int(spec.get("minLength")),
            max_length=_int(spec.get("maxLength")),
            format=spec.get("format") if isinstance(spec.get("format"), str) else None,
            **common,
        )
    if kind in ("number", "integer"):
        default = spec.get("default")
        return ElicitField(
            name,
            kind,
            default=default if _is_number(default) else None,
            minimum=_number(spec.get("minimum")),
            maximum=_number(spec.get("maximum")),
            **common,
        )
    if kind == "boolean":
        return ElicitField(name, "boolean", default=_typed(spec.get("default"), bool), **common)
    raise SchemaError(f"property {name!r} has type {kind!r}, which a form cannot ask for")


def convert(item: ElicitField, text: str) -> Value | None:
    """The value of what was typed for ``item`` (None: left empty, allowed when not
    required); raises ``ValueError`` saying what is wrong, in words for the person."""
    text = text.strip()
    if item.kind == "boolean":
        raise ValueError("a yes/no field is not typed")
    if not text:
        if item.required:
            raise ValueError("required")
        return None
    if item.kind == "enum":
        if text not in item.choices:
            raise ValueError("choose one of the listed values")
        return text
    if item.kind in ("number", "integer"):
        return _convert_number(item, text)
    if item.min_length is not None and len(text) < item.min_length:
        raise ValueError(f"at least {item.min_length} characters")
    if item.max_length is not None and len(text) > item.max_length:
        raise ValueError(f"at most {item.max_length} characters")
    checks = {
        "email": (lambda t: bool(_EMAIL.match(t)), "an email address"),
        "uri": (lambda t: bool(re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$", t)), "a URI"),
        "date": (lambda t: bool(_DATE.match(t)), "a date (YYYY-MM-DD)"),
        "date-time": (lambda t: bool(_DATE_TIME.match(t)), "a date and time (ISO 8601)"),
    }
    if item.format in checks:
        check, what = checks[item.format]
        if not check(text):
            raise ValueError(f"must be {what}")
    return text


def _convert_number(item: ElicitField, text: str) -> int | float:
    value: int | float
    try:
        value = int(text) if item.kind == "integer" else float(text)
    except ValueError:
        raise ValueError("a whole number" if item.kind == "integer" else "a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError("a number")
    if item.minimum is not None and value < item.minimum:
        raise ValueError(f"at least {item.minimum:g}")
    if item.maximum is not None and value > item.maximum:
        raise ValueError(f"at most {item.maximum:g}")
    return value


def _typed(value: Any, kind: type) -> Any:
    return value if isinstance(value, kind) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _number(value: Any) -> float | None:
    return float(value) if _is_number(value) else None
