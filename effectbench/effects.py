"""Typed effects: what must be true of the system of record for a task to succeed.

Two kinds exist in SPEC v1:

* ``record_written``: exactly ``expected_count`` records match a selector
  (at-most-once), optionally only records carrying an idempotency key, only
  records new since the baseline (``count_new_only``), and, when
  ``forbid_collateral_loss`` is set, no record present before may vanish;
* ``field_equals``: the one record the selector picks has ``field == value``
  (the read-back).

A value may be a literal string or a :class:`Param` bound to a run parameter,
so the record checked is the record this trial wrote.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from effectbench.hashing import canonical_hash


class EffectKind(StrEnum):
    """The typed effects of SPEC v1."""

    RECORD_WRITTEN = "record_written"
    FIELD_EQUALS = "field_equals"


class Param(BaseModel):
    """A value bound to the run parameter ``name``; it stringifies as ``{name}``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str

    def __str__(self) -> str:
        return "{" + self.name + "}"


Value = str | Param


def resolve_value(value: Value | None, params: Mapping[str, Any]) -> str | None:
    """Return the string a value stands for under ``params`` (unresolved: ``{name}``)."""
    if value is None:
        return None
    if isinstance(value, Param):
        return str(params[value.name]) if value.name in params else str(value)
    return value


class Effect(BaseModel):
    """One typed effect of a task's declared contract."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: EffectKind
    match: dict[str, Value]
    """Selector: every key must equal the record's value (compared as strings)."""
    field: str | None = None
    value: Value | None = None
    expected_count: int = 1
    idempotency_key: Value | None = None
    key_field: str = "key"
    """The field that identifies a record across snapshots."""
    forbid_collateral_loss: bool = False
    count_new_only: bool = False
    surface: str | None = None
    """Which surface (table) holds the records; ``None`` for a single-surface store."""

    def resolve(self, params: Mapping[str, Any]) -> Effect:
        """Return this effect with every parameter bound to its trial value."""
        return self.model_copy(
            update={
                "match": {k: resolve_value(v, params) for k, v in self.match.items()},
                "value": resolve_value(self.value, params),
                "idempotency_key": resolve_value(self.idempotency_key, params),
            }
        )

    def contract_payload(self) -> dict[str, Any]:
        """Return the payload the contract hash is taken over (interop layout)."""
        payload: dict[str, Any] = {
            "kind": self.kind.value,
            "match": {k: str(v) for k, v in sorted(self.match.items())},
            "field": self.field,
            "value": None if self.value is None else str(self.value),
            "expected_count": self.expected_count,
            "idempotency_key": None if self.idempotency_key is None else str(self.idempotency_key),
            "key_field": self.key_field,
            "forbid_collateral_loss": self.forbid_collateral_loss,
        }
        if self.count_new_only:
            payload["count_new_only"] = True
        if self.surface is not None:
            payload["surface"] = self.surface
        return payload


def contract_hash(effect: Effect) -> str:
    """Return the effect's contract hash, byte-identical with the reference."""
    return canonical_hash(effect.contract_payload())
