"""The layout of one episode row: every structural rule of a row, stated once.

:data:`ROW` lists each field of an ``episodes.jsonl`` row with its :class:`Kind`
(how its value is checked) and whether it is required. Two things are derived
from that one table, so a rule added to it holds on both paths:

* :func:`row_problems` walks the table and names every problem of a row as
  ``(check id, field, message)``; it is the full check, run on any row the fast
  test does not accept;
* :func:`fast_key` is generated from the same table at import (its source is
  :data:`FAST_SOURCE`): one inline boolean test of every rule, written with the
  very expressions :func:`row_problems` evaluates, returning the row's
  combination key (the values of the ``cached`` fields) or None.

Fields marked ``cached`` take few distinct values (task, arm, labels, the
oracle's reading). The verifier checks a row with every cached field fully
the first time their combination appears and caches the verdict under the key
(:mod:`verifier.rows`), so :func:`fast_key` skips a cached field whose kind is
decided by equality (a string equal to a valid string is that valid string).
A cached boolean is still tested on every row, because ``1 == True``.

Why generated: the verifier must check a million rows in seconds, and a
walk over the table costs about seven times what one inline expression does
(measured: the fast test takes about half the time orjson needs to parse the
row). Writing the fast test by hand kept the speed but made every rule a
two-place edit; generating it keeps the speed with one copy of the rules.
``tests/test_verify_rows.py`` still holds the two paths (and the cache) to
agreement over property-based single-field mutations, which is what would
catch a mistake in the generator.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from effectbench.effects import EffectKind
from effectbench.schema import Category, Outcome, Substrate, SwerVariant, Verdict

Problem = tuple[str, str, str]
"""``(check id, field path, message)``; the field is "" for the row itself."""


def _iso(v: str) -> bool:
    try:
        datetime.fromisoformat(v)
    except ValueError:
        return False
    return True


_NAMESPACE: dict[str, Any] = {"_INF": math.inf, "_iso": _iso}
"""Names the kind expressions and the generated code may use."""


@dataclass(frozen=True)
class Kind:
    """How one value is checked: a boolean Python expression over ``{v}``."""

    expr: str
    """E.g. ``type({v}) is int and {v} >= 0``; evaluated with :data:`_NAMESPACE`."""
    want: str
    """What the value must be, for the message (``an integer >= 0``)."""
    check: str = "structure.type"
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
            return [("structure.enum", where, f"unknown value {value!r}; allowed: {allowed}")]
        got = _json_type(value) if self.allowed is not None else f"{value!r:.60}"
        return [(self.check, where, f"must be {self.want}, got {got}")]


def enum(name: str, values: Iterable[str]) -> Kind:
    """Return the kind of a string from a fixed set of ``values``."""
    allowed = frozenset(values)
    _NAMESPACE[f"_ENUM_{name}"] = allowed
    return Kind(
        f"type({{v}}) is str and {{v}} in _ENUM_{name}",
        "a string",
        by_equality=True,
        allowed=allowed,
    )


STRING = Kind("type({v}) is str", "a string", by_equality=True)
BOOL = Kind("type({v}) is bool", "true or false")
COUNT = Kind("type({v}) is int and {v} >= 0", "an integer >= 0")
OPT_COUNT = Kind("{v} is None or (type({v}) is int and {v} >= 0)", "null or an integer >= 0")
OPT_INT = Kind("{v} is None or type({v}) is int", "null or an integer")
AMOUNT = Kind(
    "(type({v}) is float or type({v}) is int) and 0.0 <= {v} < _INF", "a finite number >= 0"
)
TIME = Kind(
    "type({v}) is str and (not {v} or _iso({v}))",
    "an ISO 8601 time string (or empty)",
    check="structure.timestamp",
)
OBJECT = Kind("type({v}) is dict", "an object")


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
    """Few distinct values: part of the combination key (see the module docstring)."""


CALL = Obj(
    (
        Field("index", COUNT),
        Field("model", STRING),
        Field("input_tokens", COUNT),
        Field("output_tokens", COUNT),
        Field("cost_usd", AMOUNT),
        Field("latency_s", AMOUNT),
        Field("note", STRING, required=False),
    )
)
AGENT = Obj(
    (
        Field("reported_success", BOOL, cached=True),
        Field("halted", BOOL, cached=True),
        Field("message", STRING, required=False),
    )
)
ORACLE = Obj(
    (
        Field("verdict", enum("verdict", (v.value for v in Verdict)), cached=True),
        Field("kind", enum("kind", (k.value for k in EffectKind)), cached=True),
        Field("channel", STRING),
        Field("reason", STRING),
        Field("observed_count", OPT_COUNT),
        Field("expected_count", OPT_COUNT),
        Field("before_reachable", BOOL, cached=True),
        Field("effect_correct", BOOL, cached=True),
        Field("effect_wrong_persisted", BOOL, cached=True),
        Field("effect_absent", BOOL, cached=True),
    )
)
ROW = Obj(
    (
        Field("episode_id", STRING),
        Field("task_id", STRING, cached=True),
        Field("arm", STRING, cached=True),
        Field("trial", COUNT),
        Field("substrate", enum("substrate", (s.value for s in Substrate)), cached=True),
        Field("category", enum("category", (c.value for c in Category)), cached=True),
        Field("seed", OPT_INT),
        Field("expected_effect_hash", STRING, cached=True),
        Field("correct_action_available", BOOL, cached=True),
        Field("agent", AGENT),
        Field("oracle", ORACLE),
        Field("outcome", enum("outcome", (o.value for o in Outcome)), cached=True),
        Field("swer_variant", enum("swer_variant", (v.value for v in SwerVariant)), cached=True),
        Field("reason", STRING),
        Field("model_calls", ListOf(CALL), required=False),
        Field("cost_usd", AMOUNT, required=False),
        Field("latency_s", AMOUNT, required=False),
        Field("env_fingerprint", OBJECT, required=False),
        Field("started_at", TIME, required=False),
        Field("finished_at", TIME, required=False),
    )
)
"""An episode row: the interop field list plus our optional fields."""

REQUIRED = tuple(f.name for f in ROW.fields if f.required)
"""Fields every episode row must have (the interop field list)."""
OPTIONAL = tuple(f.name for f in ROW.fields if not f.required)
"""Fields a row may omit (their defaults: [], 0.0, 0.0, {}, "", "")."""


# --------------------------------------------------------------------------- the full check


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _json_type(v: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer"}
    names.update({float: "number", type(None): "null"})
    return names.get(type(v), type(v).__name__)


def _problems(value: Any, kind: Kind | Obj | ListOf, where: str) -> list[Problem]:
    if isinstance(kind, Kind):
        return kind.problems(value, where)
    if isinstance(kind, ListOf):
        if type(value) is not list:
            return [("structure.type", where, f"must be an array, got {_json_type(value)}")]
        out: list[Problem] = []
        for i, item in enumerate(value):
            out += _problems(item, kind.item, f"{where}[{i}]")
        return out
    if type(value) is not dict:
        return [("structure.type", where, f"must be an object, got {_json_type(value)}")]
    out = []
    names = {f.name for f in kind.fields}
    for f in kind.fields:
        if f.required and f.name not in value:
            out.append(
                ("structure.missing_field", _join(where, f.name), "required field is missing")
            )
    for key in value:
        if key not in names:
            out.append(
                (
                    "structure.unknown_field",
                    _join(where, key),
                    "unknown field; remove it (SPEC v1 rows carry only the interop fields)",
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
