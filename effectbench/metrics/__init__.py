"""The metrics of SPEC section 1: pure aggregations over episode rows.

Every rate carries its raw numerator and denominator and a Wilson interval, and every summary
carries the per (category x substrate) cells beside the totals. The package is split along its
sections; every name is also importable from ``effectbench.metrics`` itself:

* :mod:`.rates`: a rate with its raw k/n and Wilson's score interval;
* :mod:`.events`: the frame of scored episodes (pandas, or a :class:`CodedFrame` without it)
  and :func:`episode_events`, the one definition of what each rate counts;
* :mod:`.summary`: :func:`summarize`, the results block of one arm (totals, cells, pass^k,
  cost and latency), the single definition of every number a report, a bundle, the verifier
  and the site show;
* :mod:`.newcombe`: the paired difference of two rates over independent pairs (Newcombe's
  method 10) and square-and-add;
* :mod:`.tasks`: one arm's episodes counted per task (:class:`TaskTable`), what every
  task-clustered number reads;
* :mod:`.clustered`: task-clustered intervals (Wilson on the Rao-Scott effective counts), the
  one-sided bound of a rate seen 0 times, the bound with dropped trials counted;
* :mod:`.student_t`: Student's t without SciPy at run time;
* :mod:`.cost`: prices, expected cost per 100 tasks and what doing nothing costs;
* :mod:`.comparisons`: paired, task-clustered differences of two systems (and of one system
  across substrates);
* :mod:`.power`: a board's minimum detectable difference.

The modules import each other one way (rates and events first, comparisons last) and nothing
of the project but the schema (tests/test_layering.py holds it).
"""

from __future__ import annotations

from effectbench.metrics.clustered import (
    CLUSTERED_METHOD,
    ONE_SIDED_ALPHA,
    ClusteredInterval,
    TaskRate,
    clustered_wilson,
    design_effect,
    rate_over_tasks,
    task_rate,
    worst_case_rate,
    zero_upper_bound,
)
from effectbench.metrics.comparisons import (
    PAIRED_COST_METHOD,
    PAIRED_TASK_METHOD,
    SUBSTRATE_RATES,
    Difference,
    across_substrates,
    cost_difference,
    rate_difference,
    substrate_difference,
)
from effectbench.metrics.cost import (
    COST_METHOD,
    COST_NAMES,
    COST_PER,
    COST_PRESETS,
    DEFAULT_COSTS,
    MAX_COST_WEIGHT,
    CostError,
    CostEstimate,
    CostWeights,
    cost_weights,
    expected_cost,
    idle_cost,
    idle_over_halt,
    never_acts,
    parse_costs,
    task_costs,
)
from effectbench.metrics.events import (
    CODED_COLUMNS,
    COLLATERAL_COLUMN,
    EVENTS,
    FRAME_COLUMNS,
    RATE_OUTCOMES,
    RECEIPT_EVENTS,
    Coded,
    CodedFrame,
    episode_events,
    episode_frame,
    frame_from_columns,
)
from effectbench.metrics.newcombe import (
    PAIRED_METHOD,
    PairedDifference,
    paired_difference,
    square_and_add,
)
from effectbench.metrics.power import (
    POWER,
    minimum_detectable_difference,
)
from effectbench.metrics.rates import (
    Z95,
    Interval,
    Rate,
    rate,
    wilson,
)
from effectbench.metrics.student_t import (
    regularized_beta,
    student_t_cdf,
    student_t_quantile,
)
from effectbench.metrics.summary import (
    ALL_CATEGORIES,
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    PASS_K,
    Cell,
    CostSummary,
    LatencySummary,
    Results,
    bootstrap_mean,
    pass_hat_k,
    substrate_totals,
    summarize,
    transactional_faults_mishandled,
)
from effectbench.metrics.tasks import (
    TaskTable,
    task_table,
)

__all__ = [
    "ALL_CATEGORIES",
    "BOOTSTRAP_RESAMPLES",
    "BOOTSTRAP_SEED",
    "CLUSTERED_METHOD",
    "CODED_COLUMNS",
    "COLLATERAL_COLUMN",
    "COST_METHOD",
    "COST_NAMES",
    "COST_PER",
    "COST_PRESETS",
    "Cell",
    "ClusteredInterval",
    "Coded",
    "CodedFrame",
    "CostError",
    "CostEstimate",
    "CostSummary",
    "CostWeights",
    "DEFAULT_COSTS",
    "Difference",
    "EVENTS",
    "FRAME_COLUMNS",
    "Interval",
    "LatencySummary",
    "MAX_COST_WEIGHT",
    "ONE_SIDED_ALPHA",
    "PAIRED_COST_METHOD",
    "PAIRED_METHOD",
    "PAIRED_TASK_METHOD",
    "PASS_K",
    "POWER",
    "PairedDifference",
    "RATE_OUTCOMES",
    "RECEIPT_EVENTS",
    "Rate",
    "Results",
    "SUBSTRATE_RATES",
    "TaskRate",
    "TaskTable",
    "Z95",
    "across_substrates",
    "bootstrap_mean",
    "clustered_wilson",
    "cost_difference",
    "cost_weights",
    "design_effect",
    "episode_events",
    "episode_frame",
    "expected_cost",
    "frame_from_columns",
    "idle_cost",
    "idle_over_halt",
    "minimum_detectable_difference",
    "never_acts",
    "paired_difference",
    "parse_costs",
    "pass_hat_k",
    "rate",
    "rate_difference",
    "rate_over_tasks",
    "regularized_beta",
    "square_and_add",
    "student_t_cdf",
    "student_t_quantile",
    "substrate_difference",
    "substrate_totals",
    "summarize",
    "task_costs",
    "task_rate",
    "task_table",
    "transactional_faults_mishandled",
    "wilson",
    "worst_case_rate",
    "zero_upper_bound",
]
