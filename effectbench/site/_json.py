"""``downloads/leaderboard.json`` and its JSON Schema: the boards for other tools to consume.

The document is built from the same board frames as the pages and the CSV (one
entry per accepted submission, each board in its default order), and its schema
is generated from the pydantic models below, so the two cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from effectbench.metrics import Cell, Results, substrate_totals
from effectbench.site._entries import Entry
from effectbench.site._tables import DEFAULT_ORDER, RATES, Board

FORMAT = 1
"""Bumped when a field changes meaning or disappears (new fields may be added freely)."""
SCHEMA_FILE = "leaderboard.schema.json"


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RateJSON(_Model):
    """A rate with its counts and 95% Wilson interval."""

    k: int = Field(ge=0, description="numerator")
    n: int = Field(ge=0, description="denominator")
    rate: float = Field(ge=0, le=1)
    lo: float = Field(description="95% Wilson interval, lower end")
    hi: float = Field(description="95% Wilson interval, upper end")


class GapJSON(_Model):
    """The success-effect gap: screen success minus task success (a fraction, not points)."""

    value: float = Field(ge=-1, le=1)
    lo: float | None = Field(default=None, description="95% percentile-bootstrap interval")
    hi: float | None = None


class RatesJSON(_Model):
    """Every rate of one set of episodes (all of them, a substrate's, or one cell's)."""

    n_episodes: int = Field(ge=0)
    swer: RateJSON
    over_halt: RateJSON
    task_success: RateJSON
    screen_success: RateJSON
    swer_wrong_write: RateJSON
    swer_phantom: RateJSON
    gap: GapJSON


class CellJSON(RatesJSON):
    """The rates of one (category x substrate) cell."""

    category: str
    substrate: str


class SignerJSON(_Model):
    """The verified Sigstore signer."""

    identity: str
    issuer: str


class EntryJSON(_Model):
    """One accepted submission on a board."""

    system: str
    slug: str = Field(description="the submission's id on the site (its folder, sanitised)")
    status: str = Field(description="ranked, or preview (a local build's unsigned bundle)")
    rank_best: int | None = Field(default=None, ge=1)
    rank_worst: int | None = Field(default=None, ge=1)
    page: str = Field(description="its page, relative to the site's root")
    badge: str | None = Field(default=None, description="its SVG badge (ranked entries only)")
    signer: SignerJSON | None = None
    reproduced: bool
    spec_version: str
    fingerprint: str
    trials: int
    n_tasks: int
    date: str
    totals: RatesJSON
    substrates: dict[str, RatesJSON] = Field(description="per substrate, over every category")
    cells: list[CellJSON]


class BoardJSON(_Model):
    """One board: one SPEC major version on one pack, entries in the default order."""

    key: str
    spec_major: str
    pack: str
    fingerprints: list[str]
    substrates: list[str]
    default_order: list[str] = Field(description="the sort keys of the entries' order")
    entries: list[EntryJSON]


class LeaderboardJSON(_Model):
    """Every board of the site."""

    format: int = Field(description="the document's format version")
    build_date: str
    boards: list[BoardJSON]


DIGITS = 6
"""Decimals kept of every fraction (as in the CSV): a millionth is far below any interval."""


def _r(x: float) -> float:
    return round(float(x), DIGITS)


def _rate(r: Any) -> RateJSON:
    return RateJSON(k=r.numerator, n=r.denominator, rate=_r(r.rate), lo=_r(r.ci.lo), hi=_r(r.ci.hi))


def _rates(source: Results | Cell, n: int) -> dict[str, Any]:
    out: dict[str, Any] = {"n_episodes": n}
    for name in RATES:
        out[name] = _rate(getattr(source, name))
    ci = getattr(source, "success_effect_gap_ci", None)
    out["gap"] = GapJSON(
        value=_r(source.success_effect_gap),
        lo=_r(ci.lo) if ci is not None else None,
        hi=_r(ci.hi) if ci is not None else None,
    )
    return out


def _int_or_none(x: Any) -> int | None:
    return None if x is None or pd.isna(x) else int(x)


def leaderboard_json(
    boards: Sequence[Board], entries: dict[str, Entry], badges: set[str], build_date: str
) -> LeaderboardJSON:
    """Return the whole leaderboard as a document (``badges``: slugs that have a badge)."""
    out = []
    for b in boards:
        items = []
        for row in b.frame.to_dict("records"):
            e = entries[row["slug"]]
            res = e.results
            assert res is not None
            items.append(
                EntryJSON(
                    system=e.name,
                    slug=e.slug,
                    status=e.status,
                    rank_best=_int_or_none(row["rank_best"]),
                    rank_worst=_int_or_none(row["rank_worst"]),
                    page=f"submissions/{e.slug}.html",
                    badge=f"badges/{e.slug}.svg" if e.slug in badges else None,
                    signer=SignerJSON(identity=e.signer.identity, issuer=e.signer.issuer)
                    if e.signer
                    else None,
                    reproduced=bool(e.reproduced),
                    spec_version=e.spec_version,
                    fingerprint=e.fingerprint,
                    trials=int(row["trials"]),
                    n_tasks=res.n_tasks,
                    date=e.date,
                    totals=RatesJSON(**_rates(res, res.n_episodes)),
                    substrates={
                        c.substrate: RatesJSON(**_rates(c, c.n)) for c in substrate_totals(res)
                    },
                    cells=[
                        CellJSON(category=c.category, substrate=c.substrate, **_rates(c, c.n))
                        for c in res.cells
                    ],
                )
            )
        out.append(
            BoardJSON(
                key=b.key,
                spec_major=b.spec_major,
                pack=b.pack,
                fingerprints=list(b.fingerprints),
                substrates=list(b.substrates),
                default_order=list(DEFAULT_ORDER),
                entries=items,
            )
        )
    return LeaderboardJSON(format=FORMAT, build_date=build_date, boards=out)


def dumps(doc: LeaderboardJSON) -> bytes:
    """Return the document as compact JSON (keys in model order, byte-stable)."""
    return orjson.dumps(doc.model_dump(mode="json")) + b"\n"


def schema() -> bytes:
    """Return the JSON Schema (draft 2020-12) of ``leaderboard.json``."""
    body = LeaderboardJSON.model_json_schema()
    body = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_FILE,
        **body,
    }
    return orjson.dumps(body, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
