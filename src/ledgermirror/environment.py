"""Typed settings from environment variables: the one loader of ``settings.py`` and ``status/config.py``.

A settings class is a frozen dataclass; :func:`load` reads the variable ``<prefix><FIELD NAME IN CAPITALS>`` of
each of its fields once and converts its text by the field's annotation:

- ``str``: as written; ``int``: a whole number (``int()``); ``float``: a finite number; ``bool``: ``1``,
  ``true``, ``yes``, ``on`` or ``0``, ``false``, ``no``, ``off`` (any case); ``Path``: a path, ``~`` expanded;
- ``Literal[...]``: one of its values (any case); ``X | None``: as ``X``;
- ``Annotated[int, Range(...)]`` (:data:`Port`, :data:`Positive`, :data:`NonNegative`) or
  ``Annotated[float, Range(...)]``: the number, within the range;
- a field given a parser of its own (``parsers``): whatever that parser makes of the text.

An unset or empty variable keeps the field's default. A value that does not convert is a :class:`SettingsError`
whose message is one line naming the variable; an annotation of any other type is a :class:`TypeError` at the
first load, a mistake in the settings class.

Why not ``pydantic-settings``: a process that loads these settings took 145 ms with it against 46 ms with this
module (``hyperfine``, Python alone 9 ms; pydantic's import and model build are the difference), a hundred
milliseconds more on every command, when ``ledgermirror --help`` takes 150 ms in all.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    SettingsClass = TypeVar("SettingsClass", bound=DataclassInstance)
else:
    SettingsClass = TypeVar("SettingsClass")


class SettingsError(ValueError):
    """A setting's variable holds a value of the wrong shape (the message is one line naming it)."""


@dataclass(frozen=True, slots=True)
class Range:
    """The values a number setting may take, both ends included (``None``: unbounded)."""

    low: float | None = None
    high: float | None = None

    def problem(self) -> str:
        if self.high is None:
            return f"at least {_number(self.low)}"
        if self.low is None:
            return f"at most {_number(self.high)}"
        return f"from {_number(self.low)} to {_number(self.high)}"

    def holds(self, value: float) -> bool:
        return (self.low is None or value >= self.low) and (self.high is None or value <= self.high)


def _number(value: float | None) -> str:
    return str(int(value)) if value is not None and value == int(value) else str(value)


Port = Annotated[int, Range(1, 65535)]
PortOrOff = Annotated[int, Range(0, 65535)]
"""A port, or 0 for a server that is off."""
Positive = Annotated[int, Range(1)]
NonNegative = Annotated[int, Range(0)]

Parser = Callable[[str, str], object]
"""A field's own parser: ``(variable, text) -> value``; a ``ValueError`` it raises becomes a SettingsError (its
message after the variable's name, unless it names the variable already)."""

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def load(
    cls: type[SettingsClass],
    prefix: str,
    env: Mapping[str, str],
    *,
    parsers: Mapping[str, Parser] | None = None,
) -> SettingsClass:
    """An instance of ``cls``: each field from its variable in ``env`` when set, else its default."""
    hints = typing.get_type_hints(cls, include_extras=True)
    own = parsers or {}
    changes: dict[str, Any] = {}
    for item in dataclasses.fields(cls):
        variable = prefix + item.name.upper()
        text = env.get(variable)
        if text is None or text == "":
            continue
        if item.name in own:
            try:
                changes[item.name] = own[item.name](variable, text)
            except ValueError as error:
                message = str(error)
                raise SettingsError(message if variable in message else f"{variable}: {message}") from None
        else:
            changes[item.name] = convert(variable, hints[item.name], text)
    return dataclasses.replace(cls(), **changes)


def convert(variable: str, kind: Any, text: str) -> object:
    """The value of ``text`` as the annotation ``kind`` says (see the module's docstring)."""
    bounds: Range | None = None
    if typing.get_origin(kind) is Annotated:
        kind, *extras = typing.get_args(kind)
        bounds = next((extra for extra in extras if isinstance(extra, Range)), None)
    origin = typing.get_origin(kind)
    if origin in (types.UnionType, typing.Union):
        present = [arg for arg in typing.get_args(kind) if arg is not type(None)]
        if len(present) != 1:
            raise TypeError(f"{variable}: a union setting is one type or None, not {kind}")
        return convert(variable, present[0], text)
    if origin is Literal:
        choices = typing.get_args(kind)
        for choice in choices:
            if text.strip().lower() == str(choice).lower():
                return choice
        listed = ", ".join(str(choice) for choice in choices)
        raise SettingsError(f"{variable} must be one of {listed}, not {text!r}")
    if kind is bool:
        lowered = text.strip().lower()
        if lowered in _TRUE or lowered in _FALSE:
            return lowered in _TRUE
        raise SettingsError(f"{variable} must be true or false, not {text!r}")
    if kind is int or kind is float:
        return _number_of(variable, kind, text, bounds)
    if kind is Path:
        return Path(text).expanduser()
    if kind is str:
        return text
    raise TypeError(f"{variable}: no conversion from text to {kind}")


def _number_of(variable: str, kind: type[int] | type[float], text: str, bounds: Range | None) -> int | float:
    try:
        value = kind(text)
    except ValueError:
        raise SettingsError(
            f"{variable} must be {'an integer' if kind is int else 'a number'}, not {text!r}"
        ) from None
    if not math.isfinite(value):
        raise SettingsError(f"{variable} must be a finite number, not {text!r}")
    if bounds is not None and not bounds.holds(value):
        raise SettingsError(f"{variable} must be {bounds.problem()}, not {text!r}")
    return value
