"""Plain-text rendering of a results block: every rate with k/n and its interval."""

from __future__ import annotations

from effectbench.metrics import Rate, Results

HEADLINE = (
    ("SWER", "swer"),
    ("  wrong-write", "swer_wrong_write"),
    ("  phantom", "swer_phantom"),
    ("over-halt", "over_halt"),
    ("task success", "task_success"),
    ("screen success", "screen_success"),
)


def format_rate(r: Rate) -> str:
    """Return ``k/n = p% [lo%, hi%]``."""
    return (
        f"{r.numerator:>4}/{r.denominator:<4} = {100 * r.rate:5.1f}%  "
        f"[{100 * r.ci.lo:5.1f}%, {100 * r.ci.hi:5.1f}%]"
    )


def format_results(res: Results) -> str:
    """Return the readable report of one arm: totals, gap, pass^k, outcomes, cells."""
    lines = [f"arm {res.arm}: {res.n_episodes} episodes over {res.n_tasks} tasks"]
    for label, attr in HEADLINE:
        lines.append(f"  {label:<16}{format_rate(getattr(res, attr))}")
    gap = f"  {'gap':<16}{100 * res.success_effect_gap:+.1f} pts (screen - task success)"
    if res.success_effect_gap_ci is not None:
        ci = res.success_effect_gap_ci
        gap += f"  bootstrap 95% [{100 * ci.lo:+.1f}, {100 * ci.hi:+.1f}]"
    lines.append(gap)
    lines.append(
        "  pass^k          " + "  ".join(f"k={k}: {v:.3f}" for k, v in res.pass_hat_k.items())
    )
    lines.append(
        "  outcomes        " + ", ".join(f"{k} {v}" for k, v in res.outcome_counts.items())
    )
    if res.cost is not None and res.latency is not None:
        lines.append(
            f"  cost            ${res.cost.total_usd:.4f} total; latency mean "
            f"{1000 * res.latency.mean_s:.2f} ms, p95 {1000 * res.latency.p95_s:.2f} ms"
        )
    lines.append("  cells (category x substrate): SWER | over-halt | task success | screen success")
    for c in res.cells:
        lines.append(
            f"    {c.category + ' x ' + c.substrate:<40} n={c.n:<4}"
            + " | ".join(
                f"{r.numerator}/{r.denominator}"
                for r in (c.swer, c.over_halt, c.task_success, c.screen_success)
            )
        )
    return "\n".join(lines)
