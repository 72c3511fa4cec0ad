"""The verifier's table of an episode row, derived from the one row contract, and its fast test.

The contract is :class:`effectbench.schema.EpisodeRecord`: :data:`ROW` is built
from its fields at import (each field's :class:`Kind` from its type and
constraints, whether it may be left out from its default), so the verifier
accepts and refuses exactly the rows the model does. A type this module does
not know how to check raises at import, so the model cannot grow a field the
verifier silently skips. Two checks come from the table:

* :func:`row_problems` walks it and names every problem of a row as
  ``(check id, field, message)``: the full check;
* :func:`fast_key` is generated from it (source: :data:`FAST_SOURCE`): every rule
  as one inline expression, returning the row's combination key (the values of
  the :data:`CACHED` fields) or None, in which case the full check runs.

Why two: the verifier checks a million rows in seconds, and one inline
expression costs a fraction of a walk over the table. A row's cached fields
take few distinct values; :mod:`verifier.rows` checks each combination fully
once and caches the verdict, so :func:`fast_key` skips a cached field whose
every valid value is a string (equal to a valid string means valid). A cached
boolean is still tested on every row, because ``1 == True``.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import AfterValidator, BaseModel
from pydantic.fields import FieldInfo

from effectbench.findings import CheckId
from effectbench.schema import EpisodeRecord, is_iso_time, iso_time
from effectbench.strictjson import json_type

Problem = tuple[CheckId, str, str]
"""``(check id, field path, message)``; the field is "" for the row itself."""

_NAMESPACE: dict[str, Any] = {"_INF": math.inf, "_iso": is_iso_time}
"""Names the kind expressions and the generated code may use."""

CACHED = frozenset(
    (
        "task_id",
        "arm",
        "substrate",
        "category",
        "expected_effect_hash",
        "correct_action_available",
        "agent.reported_success",
        "agent.halted",
        "oracle.verdict",
        "oracle.kind",
        "oracle.before_reachable",
        "oracle.effect_correct",
        "oracle.effect_wrong_persisted",
        "oracle.effect_absent",
        "outcome",
        "swer_variant",
    )
)
"""The row fields that take few distinct values: the parts of a row's combination key."""


@dataclass(frozen=True)
class Kind:
    """How one value is checked: a boolean Python expression over ``{v}``."""

    expr: str
    """E.g. ``type({v}) is int and {v} >= 0``; evaluated with :data:`_NAMESPACE`."""
    want: str
    """What the value must be, for the message (``an integer >= 0``)."""
    check: CheckId = CheckId.STRUCTURE_TYPE
    """The check id of a value that fails."""
    by_equality: bool = False
    """Every valid value is a string: a value equal to a valid one is valid."""
    allowed: frozenset[str] | None = None
    """For an enum, its values (an unknown string is ``structure.enum``)."""
    test: Callable[[Any], bool] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        test = eval(f"lambda v: {self.expr.format(v='v')}", _NAMESPACE)  # noqa: S307
        object.__setattr__(self, "test", test)

    def problems(self, value: Any, where: str) -> list[Problem]:
        """Return the problem of ``value`` at ``where`` (none when it is valid)."""
        if self.test(value):
            return []
        if self.allowed is not None and type(value) is str:
            allowed = ", ".join(sorted(self.allowed))
            return [(CheckId.STRUCTURE_ENUM, where, f"unknown value {value!r}; allowed: {allowed}")]
        got = json_type(value) if self.allowed is not None else f"{value!r:.60}"
        return [(self.check, where, f"must be {self.want}, got {got}")]


@dataclass(frozen=True)
class Obj:
    """A JSON object with exactly these fields (the optional ones may be left out)."""

    fields: tuple[Field, ...]


@dataclass(frozen=True)
class ListOf:
    """A JSON array whose every item is an :class:`Obj`."""

    item: Obj


@dataclass(frozen=True)
class Field:
    """One field of an object: its name, how it is checked, and whether it may be left out."""

    name: str
    kind: Kind | Obj | ListOf
    required: bool = True
    cached: bool = False
    """Part of the combination key (see :data:`CACHED`)."""


# --------------------------------------------------------------------------- the derivation


def _enum(cls: type[StrEnum]) -> Kind:
    allowed = frozenset(m.value for m in cls)
    _NAMESPACE[f"_ENUM_{cls.__name__}"] = allowed
    return Kind(
        f"type({{v}}) is str and {{v}} in _ENUM_{cls.__name__}",
        "a string",
        by_equality=True,
        allowed=allowed,
    )


def _number(tp: type, metadata: Sequence[Any]) -> Kind:
    """An int, or a float (which accepts an int), with its lower bound and finiteness."""
    lower: Any = None
    finite = False
    for m in metadata:
        if getattr(m, "ge", None) is not None:
            lower = m.ge
        elif getattr(m, "allow_inf_nan", True) is False:
            finite = True
        else:
            raise TypeError(f"no row rule for the constraint {m!r}")
    if tp is int:
        expr, want = "type({v}) is int", "an integer"
    else:
        expr, want = "(type({v}) is float or type({v}) is int)", "a number"
        if finite:
            want = "a finite number"
    if lower is not None and finite:
        expr += f" and {float(lower)!r} <= {{v}} < _INF"
    elif lower is not None:
        expr += f" and {{v}} >= {lower!r}"
    elif finite:
        expr += " and -_INF < {v} < _INF"
    return Kind(expr, want if lower is None else f"{want} >= {lower!r}")


def _string(metadata: Sequence[Any]) -> Kind:
    if not metadata:
        return Kind("type({v}) is str", "a string", by_equality=True)
    if len(metadata) == 1 and isinstance(metadata[0], AfterValidator):
        if metadata[0].func is iso_time:
            return Kind(
                "type({v}) is str and (not {v} or _iso({v}))",
                "an ISO 8601 time string (or empty)",
                check=CheckId.STRUCTURE_TIMESTAMP,
            )
    raise TypeError(f"no row rule for a string with {list(metadata)!r}")


def _flatten(extra: Iterable[Any]) -> list[Any]:
    """The constraints of ``Annotated[...]`` extras (a ``Field(...)`` holds its own list)."""
    out: list[Any] = []
    for item in extra:
        out += item.metadata if isinstance(item, FieldInfo) else [item]
    return out


def _kind(tp: Any, metadata: Sequence[Any], where: str) -> Kind | Obj | ListOf:
    """The check of a value of type ``tp`` with pydantic constraints ``metadata``."""
    origin = get_origin(tp)
    if origin is Annotated:
        base, *extra = get_args(tp)
        return _kind(base, [*metadata, *_flatten(extra)], where)
    if origin in (Union, types.UnionType):
        return _optional(tp, metadata, where)
    if origin is list:
        (item,) = get_args(tp)
        return ListOf(_obj(item, f"{where}[]"))
    if origin is dict and not metadata:
        return Kind("type({v}) is dict", "an object")
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return _obj(tp, where)
    return _scalar(tp, metadata, where)


def _optional(tp: Any, metadata: Sequence[Any], where: str) -> Kind:
    """The check of ``X | None`` (X a value, not an object)."""
    args = get_args(tp)
    inner = [a for a in args if a is not type(None)]
    if len(inner) != 1 or len(args) != 2:
        raise TypeError(f"{where}: no row rule for the union {tp!r}")
    kind = _kind(inner[0], metadata, where)
    if not isinstance(kind, Kind):
        raise TypeError(f"{where}: no row rule for an optional object")
    return Kind(f"{{v}} is None or ({kind.expr})", f"null or {kind.want}", kind.check)


def _scalar(tp: Any, metadata: Sequence[Any], where: str) -> Kind:
    """The check of an enum, a boolean, a string or a number."""
    if isinstance(tp, type) and issubclass(tp, StrEnum) and not metadata:
        return _enum(tp)
    if tp is bool and not metadata:
        return Kind("type({v}) is bool", "true or false")
    if tp is str:
        return _string(metadata)
    if tp in (int, float):
        return _number(tp, metadata)
    raise TypeError(f"{where}: no row rule for {tp!r}")


def _obj(model: type[BaseModel], where: str = "") -> Obj:
    """The table of ``model``: one :class:`Field` per model field, in declaration order."""
    if model.model_config.get("extra") != "forbid":
        raise TypeError(f"{model.__name__} must refuse unknown fields (extra='forbid')")
    fields: list[Field] = []
    for name, info in model.model_fields.items():
        path = f"{where}.{name}" if where else name
        fields.append(
            Field(
                name=name,
                kind=_kind(info.annotation, info.metadata, path),
                required=info.is_required(),
                cached=path in CACHED,
            )
        )
    return Obj(tuple(fields))


ROW = _obj(EpisodeRecord)
"""An episode row, derived from :class:`~effectbench.schema.EpisodeRecord`."""
REQUIRED = tuple(f.name for f in ROW.fields if f.required)
"""Fields every episode row must have (the interop field list)."""
OPTIONAL = tuple(f.name for f in ROW.fields if not f.required)
"""Fields a row may omit (they take the model's defaults)."""


# --------------------------------------------------------------------------- the full check


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _problems(value: Any, kind: Kind | Obj | ListOf, where: str) -> list[Problem]:
    if isinstance(kind, Kind):
        return kind.problems(value, where)
    if isinstance(kind, ListOf):
        if type(value) is not list:
            return [(CheckId.STRUCTURE_TYPE, where, f"must be an array, got {json_type(value)}")]
        out: list[Problem] = []
        for i, item in enumerate(value):
            out += _problems(item, kind.item, f"{where}[{i}]")
        return out
    if type(value) is not dict:
        return [(CheckId.STRUCTURE_TYPE, where, f"must be an object, got {json_type(value)}")]
    out = []
    names = {f.name for f in kind.fields}
    for f in kind.fields:
        if f.required and f.name not in value:
            out.append(
                (CheckId.STRUCTURE_MISSING_FIELD, _join(where, f.name), "required field is missing")
            )
    for key in value:
        if key not in names:
            out.append(
                (
                    CheckId.STRUCTURE_UNKNOWN_FIELD,
                    _join(where, key),
                    "unknown field; remove it (a row carries only the fields of "
                    "docs/bundle-format.md)",
                )
            )
    for f in kind.fields:
        if f.name in value:
            out += _problems(value[f.name], f.kind, _join(where, f.name))
    return out


def row_problems(row: Any) -> list[Problem]:
    """Return every structural problem of one row as ``(check id, field, message)``."""
    return _problems(row, ROW, "")


# --------------------------------------------------------------------------- the fast test


def _leaves(obj: Obj, path: tuple[str, ...] = ()) -> Iterable[tuple[tuple[str, ...], Field]]:
    for f in obj.fields:
        if isinstance(f.kind, Obj):
            yield from _leaves(f.kind, (*path, f.name))
        else:
            yield (*path, f.name), f


KEY_FIELDS: tuple[str, ...] = tuple(".".join(p) for p, f in _leaves(ROW) if f.cached)
"""The dotted names of the cached fields, in the order of :func:`fast_key`'s tuple."""
if set(KEY_FIELDS) != CACHED:
    raise TypeError(f"CACHED names fields the row does not have: {sorted(CACHED - {*KEY_FIELDS})}")


def _var(path: tuple[str, ...]) -> str:
    return "v_" + "_".join(path)


def _function_source(name: str, obj: Obj, *, key: bool) -> list[str]:
    """Source of ``name(o)``: every rule of ``obj`` as one inline test.

    With ``key`` it returns the cached fields' values (or None) and skips the
    cached fields decided by equality; without, it returns True or False.
    """
    fail = "None" if key else "False"
    body = [f"def {name}(o):"]
    conds: list[str] = []

    def unpack(var: str, obj: Obj, path: tuple[str, ...]) -> None:
        body.append(f"    if type({var}) is not dict or len({var}) != {len(obj.fields)}:")
        body.append(f"        return {fail}")
        body.append("    try:")
        body.extend(f"        {_var((*path, f.name))} = {var}[{f.name!r}]" for f in obj.fields)
        body.append("    except KeyError:")
        body.append(f"        return {fail}")
        for f in obj.fields:
            v = _var((*path, f.name))
            if isinstance(f.kind, Obj):
                unpack(v, f.kind, (*path, f.name))
            elif isinstance(f.kind, ListOf):
                helper = f"_ok_{'_'.join((*path, f.name))}"
                _SOURCES.extend(_function_source(helper, f.kind.item, key=False))
                conds.append(f"type({v}) is list and (not {v} or all(map({helper}, {v})))")
            elif not (key and f.cached and f.kind.by_equality):
                conds.append(f.kind.expr.format(v=v))

    unpack("o", obj, ())
    body.append("    if not (")
    last = len(conds) - 1
    body.extend(f"        ({c})" + (" and" if i < last else "") for i, c in enumerate(conds))
    body.append("    ):")
    body.append(f"        return {fail}")
    if key:
        values = ", ".join(_var(p) for p, f in _leaves(obj) if f.cached)
        body.append(f"    return ({values},)")
    else:
        body.append("    return True")
    return [*body, ""]


_SOURCES: list[str] = []
_ROW_SOURCE = _function_source("fast_key", ROW, key=True)
FAST_SOURCE = "\n".join([*_SOURCES, *_ROW_SOURCE])
"""The generated source of :func:`fast_key` and its helpers (print it to read the fast test)."""
_generated: dict[str, Any] = dict(_NAMESPACE)
exec(compile(FAST_SOURCE, "<verifier.rowschema.FAST_SOURCE>", "exec"), _generated)  # noqa: S102

fast_key: Callable[[Any], tuple[Any, ...] | None] = _generated["fast_key"]
"""Return a row's combination key (:data:`KEY_FIELDS`) if it has every field and passes
every rule, except the cached fields decided by equality (their combination is checked
in full once, then cached); None means: run :func:`row_problems`."""
