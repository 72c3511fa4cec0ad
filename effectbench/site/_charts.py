"""Charts: the Vega-Lite specs of the site's figures, built with Altair.

Each builder returns a :class:`Chart`: the spec (data inlined, so its canonical
hash is its content key) plus the same numbers as a small table shown under
the figure. Rendering the specs to SVG, and caching them, is
:mod:`effectbench.site._render`'s job.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import altair as alt
import pandas as pd

SCHEME: Any = "orangered"
FONT = "sans-serif"
PADDING = {"left": 24, "right": 12, "top": 6, "bottom": 6}
"""Room around the plot: the browser's font may be wider than the one vl-convert measured."""
LABELLED_POINTS = 12
"""The frontier names its points when a board has at most this many systems."""


@dataclass(frozen=True)
class DataTable:
    """A small table of display text: the accessible twin of a chart."""

    columns: tuple[str, ...]
    rows: list[tuple[str, ...]]


@dataclass(frozen=True)
class Chart:
    """A chart to render: its spec, its file name and the accessible text around it."""

    name: str
    """File stem under ``charts/`` (unique within the site)."""
    spec: dict[str, Any]
    alt: str
    """One sentence stating what the chart shows (the image's alt text)."""
    table: DataTable
    """The same numbers as a table, shown under the chart."""


def pct(x: float) -> str:
    """Return a rate as a percentage with one decimal (``50.0%``)."""
    return f"{100 * x:.1f}%"


def _config(chart: alt.TopLevelMixin) -> dict[str, Any]:
    spec: dict[str, Any] = chart.configure(font=FONT, background="white", padding=PADDING).to_dict(
        validate=False
    )
    spec.pop("$schema", None)
    return spec


def _with_data(template: dict[str, Any], values: list[dict[str, Any]]) -> dict[str, Any]:
    spec = copy.deepcopy(template)
    spec["data"] = {"values": values}
    return spec


def _template(chart: alt.TopLevelMixin) -> dict[str, Any]:
    spec = _config(chart)
    spec.pop("data", None)
    spec.pop("datasets", None)
    return spec


_PLACEHOLDER = alt.Data(values=[{}])  # type: ignore[no-untyped-call]


def _frontier_template(height: int, labelled: bool) -> dict[str, Any]:
    base = alt.Chart(_PLACEHOLDER)
    x = alt.X(
        "over_halt:Q", title="over-halt rate (lower is better)", scale=alt.Scale(domain=[0, 1])
    )
    y = alt.Y("swer:Q", title="SWER (lower is better)", scale=alt.Scale(domain=[0, 1]))
    tip = [alt.Tooltip("system:N"), alt.Tooltip("label:N", title="SWER / over-halt")]
    layers = [
        base.mark_rule(opacity=0.55).encode(
            x="over_halt:Q", y="swer_lo:Q", y2="swer_hi:Q", description="swer_ci:N"
        ),
        base.mark_rule(opacity=0.55).encode(
            y="swer:Q", x="oh_lo:Q", x2="oh_hi:Q", description="oh_ci:N"
        ),
        base.mark_point(filled=True, size=60).encode(
            x=x, y=y, color=alt.Color("system:N", legend=None), tooltip=tip, description="d:N"
        ),
    ]
    if labelled:
        layers.append(
            base.mark_text(align="left", dx=7, dy=-7, fontSize=11).encode(
                x="over_halt:Q", y="swer:Q", text="system:N", description="d:N"
            )
        )
    return _template(alt.layer(*layers).properties(width=520, height=height))


def frontier_chart(name: str, frame: pd.DataFrame) -> Chart:
    """SWER against over-halt per system, both with their intervals (the honest frontier)."""
    values = [
        {
            "system": r.system,
            "swer": r.swer,
            "swer_lo": r.swer_lo,
            "swer_hi": r.swer_hi,
            "over_halt": r.over_halt,
            "oh_lo": r.over_halt_lo,
            "oh_hi": r.over_halt_hi,
            "label": f"{pct(r.swer)} / {pct(r.over_halt)}",
            # What a screen reader hears for each mark: the data table's numbers, never raw floats.
            "d": f"{r.system}: SWER {pct(r.swer)} ({r.swer_k}/{r.swer_n}), over-halt "
            f"{pct(r.over_halt)} ({r.over_halt_k}/{r.over_halt_n})",
            "swer_ci": f"{r.system}: SWER interval {pct(r.swer_lo)} to {pct(r.swer_hi)}",
            "oh_ci": f"{r.system}: over-halt interval {pct(r.over_halt_lo)} to "
            f"{pct(r.over_halt_hi)}",
        }
        for r in frame.itertuples()
    ]
    best = frame.loc[frame["swer"].idxmin()]
    least_halt = frame.loc[frame["over_halt"].idxmin()]
    zero = frame[frame["swer_k"] == 0]
    alt_text = (
        f"{len(frame)} systems. Lowest SWER: {best.system} at {pct(best.swer)} with over-halt "
        f"{pct(best.over_halt)}; lowest over-halt: {least_halt.system} at "
        f"{pct(least_halt.over_halt)} with SWER {pct(least_halt.swer)}."
    )
    if len(zero):
        worst_zero = zero.loc[zero["over_halt"].idxmax()]
        alt_text += (
            f" {len(zero)} reach SWER 0; among them over-halt goes up to "
            f"{pct(worst_zero.over_halt)} ({worst_zero.system})."
        )
    table = _table(frame, ["system", "swer", "over_halt"])
    template = _frontier_template(360, labelled=len(frame) <= LABELLED_POINTS)
    return Chart(name, _with_data(template, values), alt_text, table)


def gap_chart(name: str, frame: pd.DataFrame) -> Chart:
    """Screen success beside task success per system, with intervals (the gap)."""
    values = []
    for r in frame.itertuples():
        for metric, p, lo, hi in (
            ("screen success", r.screen_success, r.screen_success_lo, r.screen_success_hi),
            ("task success", r.task_success, r.task_success_lo, r.task_success_hi),
        ):
            values.append(
                {
                    "system": r.system,
                    "metric": metric,
                    "p": p,
                    "lo": lo,
                    "hi": hi,
                    "t": pct(p),
                    "d": f"{r.system}, {metric}: {pct(p)}",
                    "ci": f"{r.system}, {metric} interval: {pct(lo)} to {pct(hi)}",
                }
            )
    base = alt.Chart(_PLACEHOLDER).encode(
        y=alt.Y("system:N", sort=None, title=None), yOffset=alt.YOffset("metric:N")
    )
    chart = alt.layer(
        base.mark_bar().encode(
            x=alt.X("p:Q", title="rate", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("metric:N", legend=alt.Legend(orient="top", title=None)),
            tooltip=["system:N", "metric:N", "t:N"],
            description="d:N",
        ),
        base.mark_rule(color="black").encode(x="lo:Q", x2="hi:Q", description="ci:N"),
    ).properties(width=460, height=alt.Step(9))
    widest = frame.loc[frame["gap"].idxmax()]
    alt_text = (
        f"Largest success-effect gap: {widest.system}, screen success "
        f"{pct(widest.screen_success)} against task success {pct(widest.task_success)} "
        f"({100 * widest.gap:+.1f} points)."
    )
    base_table = _table(frame, ["system", "screen_success", "task_success"])
    table = DataTable(
        (*base_table.columns, "gap (points)"),
        [(*row, f"{100 * g:+.1f}") for row, g in zip(base_table.rows, frame["gap"], strict=True)],
    )
    return Chart(name, _with_data(_template(chart), values), alt_text, table)


def _interval_text(c: dict[str, Any], name: str) -> str:
    return (
        f"{pct(c[name])} [{pct(c[name + '_lo'])}, {pct(c[name + '_hi'])}] "
        f"{c[name + '_k']}/{c[name + '_n']}"
    )


def cells_chart(name: str, cells: Sequence[dict[str, Any]]) -> Chart:
    """Per (category x substrate) SWER for each system, with intervals.

    ``cells`` has one dict per (system, cell) with ``system``, ``category``,
    ``substrate``, ``swer``, ``swer_lo``, ``swer_hi``, ``swer_k`` and ``swer_n``.
    """
    values = [
        {
            "system": c["system"],
            "cell": f"{c['category']} × {c['substrate']}",
            "swer": c["swer"],
            "lo": c["swer_lo"],
            "hi": c["swer_hi"],
            "t": f"{pct(c['swer'])} ({c['swer_k']}/{c['swer_n']})",
            "d": f"{c['system']}, {c['category']} × {c['substrate']}: SWER {pct(c['swer'])} "
            f"({c['swer_k']}/{c['swer_n']})",
            "ci": f"{c['system']}, {c['category']} × {c['substrate']}: SWER interval "
            f"{pct(c['swer_lo'])} to {pct(c['swer_hi'])}",
        }
        for c in cells
    ]
    n_systems = len({c["system"] for c in cells})
    base = alt.Chart(_PLACEHOLDER).encode(
        y=alt.Y("cell:N", title=None, sort=None),
        yOffset=alt.YOffset("system:N", sort=None),
        color=alt.Color("system:N", sort=None, legend=alt.Legend(orient="top", title=None)),
    )
    chart = alt.layer(
        base.mark_rule().encode(x="lo:Q", x2="hi:Q", description="ci:N"),
        base.mark_point(filled=True).encode(
            x=alt.X("swer:Q", title="SWER (lower is better)", scale=alt.Scale(domain=[0, 1])),
            tooltip=["system:N", "cell:N", "t:N"],
            description="d:N",
        ),
    ).properties(width=460, height=alt.Step(max(8, 40 // max(1, n_systems))))
    worst = _first_max(cells, "swer")
    alt_text = (
        f"Highest per-cell SWER: {worst['system']} in {worst['category']} × "
        f"{worst['substrate']}, {pct(worst['swer'])} ({worst['swer_k']}/{worst['swer_n']})."
    )
    table = DataTable(
        ("system", "category", "substrate", "SWER"),
        [(c["system"], c["category"], c["substrate"], _interval_text(c, "swer")) for c in cells],
    )
    return Chart(name, _with_data(_template(chart), values), alt_text, table)


def _first_max(items: Sequence[dict[str, Any]], key: str) -> dict[str, Any]:
    # The first item with the largest value, NaN never winning (what pandas' idxmax picks).
    def value(item: dict[str, Any]) -> float:
        v = float(item[key])
        return v if v == v else float("-inf")

    return max(items, key=value)


_HEATMAP: dict[str, Any] | None = None


def _heatmap_template() -> dict[str, Any]:
    global _HEATMAP
    if _HEATMAP is None:
        # labelLimit 0: the pack's category and substrate names are short and never
        # truncated, and without a limit Vega skips a text measurement per label (a
        # third of the render time of this chart, which every page carries).
        base = alt.Chart(_PLACEHOLDER).encode(
            x=alt.X("substrate:N", title="substrate", axis=alt.Axis(labelLimit=0)),
            y=alt.Y("category:N", title=None, axis=alt.Axis(labelLimit=0)),
        )
        chart = alt.layer(
            base.mark_rect(stroke="white").encode(
                color=alt.Color(
                    "swer:Q",
                    scale=alt.Scale(domain=[0, 1], scheme=SCHEME),
                    # No gradient legend: every cell is labelled k/n, and the legend
                    # doubled the render time of the one chart every page carries.
                    legend=None,
                ),
                description="t:N",
            ),
            base.mark_text(fontSize=11).encode(
                text="t:N",
                color=alt.condition("datum.swer > 0.55", alt.value("white"), alt.value("black")),
            ),
        ).properties(width=alt.Step(110), height=alt.Step(26))
        _HEATMAP = _template(chart)
    return _HEATMAP


def heatmap_chart(name: str, system: str, cells: Sequence[dict[str, Any]]) -> Chart:
    """SWER per (category x substrate) cell of one submission, labelled ``k/n``."""
    values = [
        {
            "category": c["category"],
            "substrate": c["substrate"],
            "swer": c["swer"],
            "t": f"{c['swer_k']}/{c['swer_n']}",
        }
        for c in cells
    ]
    worst = _first_max(cells, "swer")
    n_zero = sum(c["swer_k"] == 0 for c in cells)
    if worst["swer_k"] == 0:
        alt_text = f"{system} has SWER 0 in all {len(cells)} cells."
    else:
        alt_text = (
            f"{system}: highest SWER in {worst['category']} × {worst['substrate']} "
            f"({worst['swer_k']}/{worst['swer_n']}); {n_zero} of {len(cells)} cells have SWER 0."
        )
    alt_text += " Darker cells have higher SWER."
    table = DataTable(
        ("category", "substrate", "SWER"),
        [(c["category"], c["substrate"], _interval_text(c, "swer")) for c in cells],
    )
    return Chart(name, _with_data(_heatmap_template(), values), alt_text, table)


def _table(frame: pd.DataFrame, cols: list[str]) -> DataTable:
    columns = [frame["system"].tolist()]
    for c in cols[1:]:
        columns.append(
            [
                f"{pct(p)} [{pct(lo)}, {pct(hi)}] {k}/{n}"
                for p, lo, hi, k, n in zip(
                    frame[c],
                    frame[f"{c}_lo"],
                    frame[f"{c}_hi"],
                    frame[f"{c}_k"],
                    frame[f"{c}_n"],
                    strict=True,
                )
            ]
        )
    names = ("system", *(c.replace("_", " ") for c in cols[1:]))
    return DataTable(names, [tuple(str(v) for v in row) for row in zip(*columns, strict=True)])
