"""Episode rows for property tests: a row with a model call, and one-field mutants of rows."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

from effectbench.effects import EffectKind
from effectbench.schema import Category, Outcome, Substrate, SwerVariant, Verdict


def row_with_call(row: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``row`` with one model call, so the calls' rules are reachable too."""
    row = copy.deepcopy(row)
    row["model_calls"] = [
        {
            "index": 0,
            "model": "m",
            "input_tokens": 3,
            "output_tokens": 4,
            "cost_usd": 0.25,
            "latency_s": 1,
            "note": "",
        }
    ]
    return row


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a field or list item in ``value`` (objects and arrays recursed)."""
    out = []
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, child in items:
        out.append((*prefix, key))
        if isinstance(child, (dict, list)):
            out += _paths(child, (*prefix, key))
    return out


def _at(row: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        row = row[key]
    return row


# values a forger or a careless writer could put anywhere: every JSON type, the edge
# numbers, valid and invalid times, and every valid enum value (so a field can take
# another field's value)
_ENUM_VALUES = sorted(
    {v.value for f in (Category, Substrate, Outcome, SwerVariant, Verdict, EffectKind) for v in f}
)
_SCALARS = (
    st.none()
    | st.booleans()
    | st.sampled_from([0, 1, -1, 2**63, -(2**70)])
    | st.integers()
    | st.sampled_from([0.0, -0.0, 0.5, -0.5, 1e308, -1e308, 5e-324])
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["", "x", "2026-01-01T00:00:00+00:00", "2026-13-01", "yesterday"])
    | st.sampled_from(_ENUM_VALUES)
    | st.text(max_size=6)
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=4), inner, max_size=2)
    ),
    max_leaves=3,
)


@st.composite
def row_mutants(
    draw: st.DrawFn, rows: list[dict[str, Any]]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A good row and a copy with one field set, deleted, renamed, or one field added."""
    good = draw(st.sampled_from(rows[:9]))
    if draw(st.booleans()):
        good = row_with_call(good)
    mutant = copy.deepcopy(good)
    path = draw(st.sampled_from(_paths(mutant)))
    parent = _at(mutant, path[:-1])
    action = draw(st.sampled_from(["set", "set", "set", "delete", "rename", "add"]))
    if action == "set" or isinstance(parent, list):
        parent[path[-1]] = draw(_VALUES)
    elif action == "delete":
        del parent[path[-1]]
    elif action == "rename":
        parent[draw(st.text(min_size=1, max_size=4))] = parent.pop(path[-1])
    else:
        parent[draw(st.text(min_size=1, max_size=4))] = draw(_VALUES)
    return good, mutant
