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
from functools import cache
from typing import Any

import altair as alt
import pandas as pd

from effectbench.metrics import DEFAULT_PRICES, Prices
from effectbench.site._format import signed

FONT = "sans-serif"
PADDING = {"left": 24, "right": 12, "top": 6, "bottom": 6}
"""Room around the plot: the browser's font may be wider than the one vl-convert measured."""
EDGE = 8
"""Pixels between a rate axis's ends (0 and 1) and the plot's edges, so marks at 0 or 1 stay
wholly inside the plot."""
LABEL_ROOM = 10
"""Pixels a frontier label keeps from its point."""
LABELLED_POINTS = 12
"""The frontier names its points when a board has at most this many systems."""
PHONE = "phone"
"""The variant of every chart drawn to fit a phone's screen (390 px) without sideways scroll."""


@dataclass(frozen=True)
class DataTable:
    """A small table of display text: the accessible twin of a chart."""

    columns: tuple[str, ...]
    rows: list[tuple[str, ...]]
    links: tuple[str, ...] = ()
    """Per row, where its first cell links to (a submission page), or nothing."""


@dataclass(frozen=True)
class Chart:
    """A chart to render: its spec, its file name and the accessible text around it."""

    name: str
    """Unique name within the site (the figure's id)."""
    title: str
    """What the chart is, in a few words (names its scroll region)."""
    spec: dict[str, Any]
    alt: str
    """One sentence stating what the chart shows (the image's alt text)."""
    table: DataTable
    """The same numbers as a table, shown under the chart."""
    phone: dict[str, Any] | None = None
    """The same chart drawn narrow enough for a phone (shown there instead of :attr:`spec`)."""

    @property
    def specs(self) -> dict[str, dict[str, Any]]:
        """Return every variant's spec by name (``name``, ``name@phone``)."""
        out = {self.name: self.spec}
        if self.phone is not None:
            out[f"{self.name}@{PHONE}"] = self.phone
        return out


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
    """Return a copy of ``template`` (never changed: the builders cache it) with its data."""
    spec = copy.deepcopy(template)
    spec["data"] = {"values": values}
    return spec


def _template(chart: alt.TopLevelMixin) -> dict[str, Any]:
    spec = _config(chart)
    spec.pop("data", None)
    spec.pop("datasets", None)
    return spec


_PLACEHOLDER = alt.Data(values=[{}])  # type: ignore[no-untyped-call]


def _unit() -> alt.Scale:
    return alt.Scale(domain=[0, 1], padding=EDGE, nice=False)


@cache
def _frontier_template(width: int, height: int, labelled: bool) -> dict[str, Any]:
    """The frontier's spec without its data, for one shape (built once per process: Altair
    checks every encoding against the schema, most of what building a chart costs)."""
    base = alt.Chart(_PLACEHOLDER)
    x = alt.X("over_halt:Q", title="over-halt rate (lower is better)", scale=_unit())
    y = alt.Y("swer:Q", title="SWER (lower is better)", scale=_unit())
    points = base.transform_filter("datum.kind == 'system'")
    shifts = base.transform_filter("datum.kind == 'system' && datum.shift > 0")
    tip = [
        alt.Tooltip("system:N"),
        alt.Tooltip("label:N", title="SWER / over-halt / record-wrong"),
        alt.Tooltip("value_text:N", title="net value per 100 tasks, against doing nothing"),
    ]
    layers = []
    for kind, colour, stroke in (("iso", "#8a8a8a", 1), ("idle", "#b00020", 2)):
        lines = base.transform_filter(f"datum.kind == '{kind}'")
        layers.append(
            lines.mark_rule(strokeDash=[4, 3], color=colour, strokeWidth=stroke).encode(
                x=alt.X("x1:Q", scale=_unit()),
                y=alt.Y("y1:Q", scale=_unit()),
                x2="x2:Q",
                y2="y2:Q",
                description="d:N",
            )
        )
        layers.append(
            lines.mark_text(
                align="left", baseline="bottom", dx=3, dy=-2, fontSize=10, color=colour
            ).encode(
                x=alt.X("tx:Q", scale=_unit()),
                y=alt.Y("ty:Q", scale=_unit()),
                text="line_label:N",
                description="d:N",
            )
        )
    layers += [
        shifts.mark_rule(strokeDash=[1, 2], opacity=0.8).encode(
            x=x, y="swer:Q", y2="y_cost:Q", href="href:N", description="shift_d:N"
        ),
        points.mark_rule(opacity=0.55).encode(
            x=x, y="swer_lo:Q", y2="swer_hi:Q", href="href:N", description="swer_ci:N"
        ),
        points.mark_rule(opacity=0.55).encode(
            y=y, x="oh_lo:Q", x2="oh_hi:Q", href="href:N", description="oh_ci:N"
        ),
        points.mark_point(filled=True, size=60).encode(
            x=x,
            y=y,
            color=alt.Color("system:N", legend=None),
            tooltip=tip,
            href="href:N",
            description="d:N",
        ),
        # After the points, so the first symbol of the drawing is a system's point.
        shifts.mark_point(shape="triangle-up", filled=False, size=40).encode(
            x=x, y=alt.Y("y_cost:Q", scale=_unit()), href="href:N", description="shift_d:N"
        ),
    ]
    if labelled:
        # A label sits beside its point on the side with room: left of points in the right
        # half, below points near the top; its width is limited to what that side holds.
        limit = width // 2 - LABEL_ROOM - EDGE
        for right, below in ((False, False), (True, False), (False, True), (True, True)):
            test = (
                "datum.kind == 'system' && "
                f"{'datum.over_halt > 0.5' if right else 'datum.over_halt <= 0.5'} && "
                f"{'datum.swer > 0.85' if below else 'datum.swer <= 0.85'}"
            )
            layers.append(
                base.transform_filter(test)
                .mark_text(
                    align="right" if right else "left",
                    baseline="top" if below else "bottom",
                    dx=-LABEL_ROOM if right else LABEL_ROOM,
                    dy=4 if below else -4,
                    fontSize=11,
                    limit=limit,
                )
                .encode(x="over_halt:Q", y="swer:Q", text="system:N", description="d:N")
            )
    return _template(alt.layer(*layers).properties(width=width, height=height))


ISO_LEVELS = (25.0, 50.0, 100.0, 200.0, 400.0, 800.0)
"""Harm costs per 100 tasks the frontier draws an iso-cost line for (those in the plot)."""


def iso_segment(per_100: float, costs: Prices) -> tuple[float, float, float, float] | None:
    """Return the part inside the unit square of the line silent x SWER + over_halt x
    over-halt = ``per_100`` / 100 (record-wrong at 0), as (x1, y1, x2, y2); None if outside."""
    c = per_100 / 100.0
    ws, wo = costs.silent, costs.over_halt
    if ws <= 0 and wo <= 0:
        return None
    if ws <= 0:
        x = c / wo
        return (x, 0.0, x, 1.0) if 0 <= x <= 1 else None
    if wo <= 0:
        y = c / ws
        return (0.0, y, 1.0, y) if 0 <= y <= 1 else None
    x_lo, x_hi = max(0.0, (c - ws) / wo), min(1.0, c / wo)
    if x_lo > x_hi:
        return None
    return (x_lo, (c - wo * x_lo) / ws, x_hi, (c - wo * x_hi) / ws)


def frontier_chart(
    name: str,
    frame: pd.DataFrame,
    costs: Prices | None = None,
    facts: Any = None,
    href: str = "submissions/",
) -> Chart:
    """SWER against over-halt per system, with their task-clustered intervals, on the plane of
    lines of equal harm cost at the board's prices; doing nothing's harm drawn in red.

    A system's record-wrong rate moves it off the plane: a hollow triangle above its point
    marks where its wrong records put it (SWER + record-wrong x wrong_record / silent), the
    height at which the iso-cost lines read what its harms cost. Net value (which also counts
    its correct effects) is in the tooltip and the table. Each point links to its submission
    page (``href`` + slug + ``.html``).
    """
    costs = costs or DEFAULT_PRICES
    ratio = costs.wrong_record / costs.silent if costs.silent > 0 else 0.0
    values: list[dict[str, Any]] = []
    for r in frame.itertuples():
        rw = f"{pct(r.record_wrong)} ({r.record_wrong_k}/{r.record_wrong_n})"
        values.append(
            {
                "kind": "system",
                "system": r.system,
                "href": f"{href}{r.slug}.html",
                "swer": r.swer,
                "swer_lo": r.swer_tasks_lo,
                "swer_hi": r.swer_tasks_hi,
                "over_halt": r.over_halt,
                "oh_lo": r.over_halt_tasks_lo,
                "oh_hi": r.over_halt_tasks_hi,
                "shift": ratio * r.record_wrong,
                "y_cost": min(1.0, r.swer + ratio * r.record_wrong),
                "label": f"{pct(r.swer)} / {pct(r.over_halt)} / {pct(r.record_wrong)}",
                "value_text": f"{signed(r.value)} [{signed(r.value_lo)}, {signed(r.value_hi)}]",
                # What a screen reader hears for each mark: the data table's numbers.
                "d": f"{r.system}: SWER {pct(r.swer)} ({r.swer_k}/{r.swer_n}), over-halt "
                f"{pct(r.over_halt)} ({r.over_halt_k}/{r.over_halt_n}), record-wrong {rw}, "
                f"net value {signed(r.value)} per 100 tasks against doing nothing",
                "shift_d": f"{r.system}: where its record-wrong rate {rw} puts it on the cost "
                "lines",
                "swer_ci": f"{r.system}: SWER interval counting tasks {pct(r.swer_tasks_lo)} "
                f"to {pct(r.swer_tasks_hi)}",
                "oh_ci": f"{r.system}: over-halt interval counting tasks "
                f"{pct(r.over_halt_tasks_lo)} to {pct(r.over_halt_tasks_hi)}",
            }
        )
    share = getattr(facts, "idle", None)
    idle = None if share is None else 100 * costs.over_halt * share
    levels = [("iso", c, f"{c:g}") for c in ISO_LEVELS]
    if idle is not None:
        levels.append(("idle", idle, f"doing nothing {idle:.1f}"))
    for kind, level, text in levels:
        seg = iso_segment(level, costs)
        if seg is None:
            continue
        x1, y1, x2, y2 = seg
        values.append(
            {
                "kind": kind,
                "x1": x1,
                "y1": y1,
                "x2": x2,
                "y2": y2,
                "tx": x1,
                "ty": y1,
                "line_label": text,
                "d": f"iso-cost line: {text} per 100 tasks"
                if kind == "iso"
                else f"doing nothing's over-halts: {idle:.1f} per 100 tasks",
            }
        )
    best = frame.iloc[0]
    least_halt = frame.loc[frame["over_halt"].idxmin()]
    systems = "1 system" if len(frame) == 1 else f"{len(frame)} systems"
    alt_text = (
        f"{systems}. First in the default order: {best.system}, SWER {pct(best.swer)}, "
        f"over-halt {pct(best.over_halt)}, record-wrong {pct(best.record_wrong)}, net value "
        f"{signed(best.value)} per 100 tasks against doing nothing; lowest over-halt: "
        f"{least_halt.system} at "
        f"{pct(least_halt.over_halt)} with SWER {pct(least_halt.swer)}."
    )
    zero = frame[frame["swer_k"] == 0]
    if len(zero) == 1:
        only = zero.iloc[0]
        alt_text += (
            f" 1 system reaches SWER 0: {only.system}, with over-halt {pct(only.over_halt)}."
        )
    elif len(zero):
        worst_zero = zero.loc[zero["over_halt"].idxmax()]
        alt_text += (
            f" {len(zero)} systems reach SWER 0; among them over-halt goes up to "
            f"{pct(worst_zero.over_halt)} ({worst_zero.system})."
        )
    if idle is not None:
        below = len(frame) - facts.line_after
        alt_text += (
            f" Doing nothing's over-halts would cost {idle:.1f} per 100 tasks; {below} of "
            f"{len(frame)} are worth less than doing nothing at these prices."
        )
    rates = ("swer", "over_halt", "record_wrong")
    table = DataTable(
        ("system", "swer", "over halt", "record wrong", "net value per 100 tasks"),
        [
            (
                str(r["system"]),
                *(
                    f"{_interval_text(r, m)}; tasks [{pct(r[m + '_tasks_lo'])}, "
                    f"{pct(r[m + '_tasks_hi'])}]"
                    for m in rates
                ),
                f"{signed(r['value'])} [{signed(r['value_lo'])}, {signed(r['value_hi'])}]",
            )
            for r in frame.to_dict("records")
        ],
        tuple(f"{href}{slug}.html" for slug in frame["slug"]),
    )
    labelled = len(frame) <= LABELLED_POINTS
    return Chart(
        name,
        "SWER against over-halt, with lines of equal harm",
        _with_data(_frontier_template(440, 320, labelled), values),
        alt_text,
        table,
        phone=_with_data(_frontier_template(240, 260, labelled), values),
    )


def usd(x: float) -> str:
    """Return a cost per episode in US dollars, to four significant figures (``$0.02``)."""
    return f"${x:.4g}"


@cache
def _cost_template(width: int, height: int) -> dict[str, Any]:
    """The cost-value chart's spec without its data, for one shape (built once per process)."""
    base = alt.Chart(_PLACEHOLDER)
    x = alt.X("cost:Q", title="measured cost per episode (USD)", scale=alt.Scale(zero=True))
    y = alt.Y("value:Q", title="net value per 100 tasks (higher is better)")
    points = base.transform_filter("datum.kind == 'system'")
    line = base.transform_filter("datum.kind == 'frontier'")
    zero = base.transform_filter("datum.kind == 'zero'")
    return _template(
        alt.layer(
            zero.mark_rule(color="#b00020", strokeDash=[4, 3]).encode(
                y=alt.Y("value:Q"), description="d:N"
            ),
            line.mark_line(color="#1a5fb4", strokeWidth=2).encode(
                x=x, y=y, order="order:Q", description="d:N"
            ),
            points.mark_rule(opacity=0.6).encode(
                x=x, y="value_lo:Q", y2="value_hi:Q", href="href:N", description="ci:N"
            ),
            points.mark_point(filled=True, size=60).encode(
                x=x,
                y=y,
                shape=alt.Shape("on:N", legend=None),
                color=alt.Color("system:N", legend=None),
                tooltip=[
                    alt.Tooltip("system:N"),
                    alt.Tooltip("cost_text:N", title="cost per episode"),
                    alt.Tooltip("value_text:N", title="net value per 100 tasks"),
                ],
                href="href:N",
                description="d:N",
            ),
        ).properties(width=width, height=height)
    )


def cost_value_chart(
    name: str, frame: pd.DataFrame, on_frontier: Sequence[str], href: str = "submissions/"
) -> Chart | None:
    """Measured cost per episode against net value per 100 tasks, each ranked system with a
    measured cost a point with its interval's whiskers, the frontier (``on_frontier``: the
    systems no other beats on both, cheapest first) joined by a line, doing nothing the red
    line at 0. None when no system of ``frame`` has a measured cost: none is ever placed at a
    cost of zero for want of one."""
    shown = frame[(frame["status"] == "ranked") & frame["cost"].notna()]
    if shown.empty:
        return None
    front = {slug: i for i, slug in enumerate(on_frontier)}
    values: list[dict[str, Any]] = [
        {"kind": "zero", "value": 0.0, "d": "doing nothing: net value 0"}
    ]
    rows: list[tuple[str, ...]] = []
    for r in shown.to_dict("records"):
        on = r["slug"] in front
        value_text = f"{signed(r['value'])} [{signed(r['value_lo'])}, {signed(r['value_hi'])}]"
        values.append(
            {
                "kind": "system",
                "system": r["system"],
                "href": f"{href}{r['slug']}.html",
                "cost": r["cost"],
                "value": r["value"],
                "value_lo": r["value_lo"],
                "value_hi": r["value_hi"],
                "on": "on the frontier" if on else "beaten",
                "cost_text": usd(r["cost"]),
                "value_text": value_text,
                "d": f"{r['system']}: {usd(r['cost'])} per episode, net value {value_text} "
                f"per 100 tasks{', on the frontier' if on else ''}",
                "ci": f"{r['system']}: net value interval {signed(r['value_lo'])} to "
                f"{signed(r['value_hi'])}",
            }
        )
        if on:
            values.append(
                {
                    "kind": "frontier",
                    "order": front[r["slug"]],
                    "cost": r["cost"],
                    "value": r["value"],
                    "d": f"frontier through {r['system']}",
                }
            )
        rows.append((str(r["system"]), usd(r["cost"]), value_text, "yes" if on else "no"))
    names = [str(shown.loc[shown["slug"] == s, "system"].iloc[0]) for s in on_frontier]
    systems = "1 system" if len(shown) == 1 else f"{len(shown)} systems"
    alt_text = (
        f"{systems} with a measured cost. On the frontier, cheapest first: {', '.join(names)}."
    )
    table = DataTable(
        ("system", "cost per episode", "net value per 100 tasks", "on the frontier"),
        rows,
        tuple(f"{href}{slug}.html" for slug in shown["slug"]),
    )
    return Chart(
        name,
        "Measured cost against net value, with the frontier",
        _with_data(_cost_template(440, 300), values),
        alt_text,
        table,
        phone=_with_data(_cost_template(240, 240), values),
    )


@cache
def _gap_template(width: int, label_limit: int) -> dict[str, Any]:
    """The gap chart's spec without its data, for one shape (built once per process)."""
    base = alt.Chart(_PLACEHOLDER).encode(
        y=alt.Y("system:N", sort=None, title=None, axis=alt.Axis(labelLimit=label_limit)),
        yOffset=alt.YOffset("metric:N"),
    )
    chart = alt.layer(
        base.mark_bar().encode(
            x=alt.X("p:Q", title="rate", scale=_unit()),
            color=alt.Color("metric:N", legend=alt.Legend(orient="top", title=None)),
            tooltip=["system:N", "metric:N", "t:N"],
            href="href:N",
            description="d:N",
        ),
        base.mark_rule(color="black").encode(x="lo:Q", x2="hi:Q", description="ci:N"),
    ).properties(width=width, height=alt.Step(9))
    return _template(chart)


def gap_chart(name: str, frame: pd.DataFrame, href: str = "submissions/") -> Chart:
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
                    "href": f"{href}{r.slug}.html",
                    "metric": metric,
                    "p": p,
                    "lo": lo,
                    "hi": hi,
                    "t": pct(p),
                    "d": f"{r.system}, {metric}: {pct(p)}",
                    "ci": f"{r.system}, {metric} interval: {pct(lo)} to {pct(hi)}",
                }
            )

    widest = frame.loc[frame["gap"].idxmax()]
    alt_text = (
        f"Largest success-effect gap: {widest.system}, screen success "
        f"{pct(widest.screen_success)} against task success {pct(widest.task_success)} "
        f"({100 * widest.gap:+.1f} points)."
    )
    base_table = _table(frame, ["system", "screen_success", "task_success"], href)
    table = DataTable(
        (*base_table.columns, "gap (points)"),
        [(*row, f"{100 * g:+.1f}") for row, g in zip(base_table.rows, frame["gap"], strict=True)],
        base_table.links,
    )
    return Chart(
        name,
        "screen success beside task success",
        _with_data(_gap_template(360, 180), values),
        alt_text,
        table,
        phone=_with_data(_gap_template(160, 110), values),
    )


def _interval_text(c: dict[str, Any], name: str) -> str:
    return (
        f"{pct(c[name])} [{pct(c[name + '_lo'])}, {pct(c[name + '_hi'])}] "
        f"{c[name + '_k']}/{c[name + '_n']}"
    )


CELL_METRICS = (("swer", "SWER"), ("over_halt", "over-halt"), ("record_wrong", "record-wrong"))
"""The three rates of the per-cell chart, one panel each, always together."""


@cache
def _cells_template(phone: bool, systems: int) -> dict[str, Any]:
    """The per-cell chart's spec without its data, for a phone or not and a board of
    ``systems`` systems (built once per shape and process)."""
    # On a phone the three panels stand one above the other, each cell's label on two
    # lines (category, then substrate), so the whole chart fits the screen's width.
    axis = (
        alt.Axis(labelLimit=170, labelExpr="split(datum.label, ' × ')", labelFontSize=10)
        if phone
        else alt.Axis(labelLimit=200)
    )
    legend = (
        alt.Legend(orient="top", title=None, columns=1, labelLimit=150)
        if phone
        else alt.Legend(orient="top", title=None)
    )
    base = alt.Chart(_PLACEHOLDER).encode(
        y=alt.Y("cell:N", title=None, sort=None, axis=axis),
        yOffset=alt.YOffset("system:N", sort=None),
        color=alt.Color("system:N", sort=None, legend=legend),
    )
    # The height of one system's mark in a cell; a cell's two-line label needs 26 px.
    step = max(8, 40 // max(1, systems), -(-26 // max(1, systems)) if phone else 0)
    layer = alt.layer(
        base.mark_rule().encode(x="lo:Q", x2="hi:Q", description="ci:N"),
        base.mark_point(filled=True).encode(
            x=alt.X("p:Q", title="rate (lower is better)", scale=_unit()),
            tooltip=["system:N", "cell:N", "metric:N", "t:N"],
            href="href:N",
            description="d:N",
        ),
    ).properties(width=125 if phone else 170, height=alt.Step(step))
    order = [label for _, label in CELL_METRICS]
    facet = (
        layer.facet(
            row=alt.Row(
                "metric:N",
                title=None,
                sort=order,
                header=alt.Header(labelAngle=0, labelAlign="left", labelOrient="top"),
            )
        )
        if phone
        else layer.facet(column=alt.Column("metric:N", title=None, sort=order))
    )
    return _template(facet)


def cells_chart(name: str, cells: Sequence[dict[str, Any]], href: str = "submissions/") -> Chart:
    """Per (category x substrate) SWER, over-halt and record-wrong for each system, with intervals.

    ``cells`` has one dict per (system, cell) with ``system``, ``slug``, ``category``,
    ``substrate`` and, for SWER and over-halt, the rate, its interval and ``k``/``n``.
    Three panels side by side share the cell axis: SWER, over-halt, record-wrong.
    """
    values = []
    for c in cells:
        where = f"{c['category']} × {c['substrate']}"
        for key, label in CELL_METRICS:
            values.append(
                {
                    "system": c["system"],
                    "href": f"{href}{c['slug']}.html",
                    "cell": where,
                    "metric": label,
                    "p": c[key],
                    "lo": c[f"{key}_lo"],
                    "hi": c[f"{key}_hi"],
                    "t": f"{pct(c[key])} ({c[f'{key}_k']}/{c[f'{key}_n']})",
                    "d": f"{c['system']}, {where}: {label} {pct(c[key])} "
                    f"({c[f'{key}_k']}/{c[f'{key}_n']})",
                    "ci": f"{c['system']}, {where}: {label} interval {pct(c[f'{key}_lo'])} to "
                    f"{pct(c[f'{key}_hi'])}",
                }
            )
    n_systems = len({c["system"] for c in cells})

    worst = _first_max(cells, "swer")
    most_halt = _first_max(cells, "over_halt")
    alt_text = (
        f"Highest per-cell SWER: {worst['system']} in {worst['category']} × "
        f"{worst['substrate']}, {pct(worst['swer'])} ({worst['swer_k']}/{worst['swer_n']}); "
        f"highest per-cell over-halt: {most_halt['system']} in {most_halt['category']} × "
        f"{most_halt['substrate']}, {pct(most_halt['over_halt'])} "
        f"({most_halt['over_halt_k']}/{most_halt['over_halt_n']})."
    )
    most_wrong = _first_max(cells, "record_wrong")
    alt_text += (
        f" Highest per-cell record-wrong: {most_wrong['system']} in {most_wrong['category']} "
        f"× {most_wrong['substrate']}, {pct(most_wrong['record_wrong'])} "
        f"({most_wrong['record_wrong_k']}/{most_wrong['record_wrong_n']})."
    )
    table = DataTable(
        ("system", "category", "substrate", "SWER", "over-halt", "record-wrong"),
        [
            (
                c["system"],
                c["category"],
                c["substrate"],
                _interval_text(c, "swer"),
                _interval_text(c, "over_halt"),
                _interval_text(c, "record_wrong"),
            )
            for c in cells
        ],
        tuple(f"{href}{c['slug']}.html" for c in cells),
    )
    return Chart(
        name,
        "SWER, over-halt and record-wrong per cell",
        _with_data(_cells_template(False, n_systems), values),
        alt_text,
        table,
        phone=_with_data(_cells_template(True, n_systems), values),
    )


def _first_max(items: Sequence[dict[str, Any]], key: str) -> dict[str, Any]:
    # The first item with the largest value, NaN never winning (what pandas' idxmax picks).
    def value(item: dict[str, Any]) -> float:
        v = float(item[key])
        return v if v == v else float("-inf")

    return max(items, key=value)


def _table(frame: pd.DataFrame, cols: list[str], href: str) -> DataTable:
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
    return DataTable(
        names,
        [tuple(str(v) for v in row) for row in zip(*columns, strict=True)],
        tuple(f"{href}{slug}.html" for slug in frame["slug"]),
    )
