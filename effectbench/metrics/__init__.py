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
* :mod:`.newcombe`: square-and-add (MOVER) of several intervals, and the paired difference of
  two rates over independent pairs (Newcombe's method 10);
* :mod:`.tasks`: one arm's episodes counted per task (:class:`TaskTable`), what every
  task-clustered number reads;
* :mod:`.clustered`: task-clustered intervals (Wilson on the Rao-Scott effective counts), the
  one-sided bound of a rate seen 0 times, the bound with dropped trials counted, and several
  rates' intervals with their correlations across tasks;
* :mod:`.value`: the four prices, net value per 100 tasks, doing nothing as its zero line and
  each system's break-even value;
* :mod:`.comparisons`: paired, task-clustered differences of two systems (and of one system
  across substrates), the family-wise level of a board and the fewest tasks that can put a
  difference beyond noise;
* :mod:`.paired`: the one estimator of every difference a board states (per-unit paired,
  cluster-robust with G / (G - 1), Student's t on G - 1 degrees of freedom) and t's quantiles;
* :mod:`.power`: a board's minimum detectable difference;
* :mod:`.dead`: the units of a board on which every ranked system has the same outcome;
* :mod:`.usage`: per substrate, first-try task successes and the measured model cost.

The modules import each other one way (rates and events first, comparisons last) and nothing
of the project but the schema (tests/test_layering.py holds it).
"""

from __future__ import annotations

from effectbench.metrics.clustered import (
    CLUSTERED_METHOD,
    ONE_SIDED_ALPHA,
    SPREAD_TOLERANCE,
    ClusteredInterval,
    Components,
    TaskRate,
    clustered_wilson,
    components,
    correlation,
    design_effect,
    rate_over_tasks,
    task_rate,
    worst_case_rate,
    zero_upper_bound,
)
from effectbench.metrics.comparisons import (
    CONFIDENCE,
    PAIRED_TASK_METHOD,
    PAIRED_VALUE_METHOD,
    SUBSTRATE_RATES,
    Difference,
    across_substrates,
    contamination_delta,
    family_confidence,
    min_shared_tasks,
    rate_difference,
    substrate_difference,
    value_difference,
    z_of,
)
from effectbench.metrics.dead import DEAD_EVENTS, DeadUnits, dead_units
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
    combine,
    paired_difference,
    square_and_add,
)
from effectbench.metrics.paired import (
    CLUSTER_METHOD,
    ClusterDifference,
    cluster_difference,
    t_quantile,
    t_table,
    t_two_sided,
)
from effectbench.metrics.power import (
    FIXED_MDD_METHOD,
    MIN_SHARED_UNITS,
    PAIRED_MDD_METHOD,
    POWER,
    RESOLUTION_MEASURES,
    Resolution,
    minimum_detectable_difference,
    per_unit_measure,
    resolution,
)
from effectbench.metrics.rates import (
    Z95,
    Interval,
    Rate,
    rate,
    wilson,
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
    joined,
    task_table,
)
from effectbench.metrics.usage import SubstrateUsage, substrate_usage
from effectbench.metrics.value import (
    DEFAULT_PRICES,
    HARM_NAMES,
    MAX_PRICE,
    PER,
    PRICE_PRESETS,
    VALUE_EVENTS,
    VALUE_METHOD,
    PriceError,
    Prices,
    ValueEstimate,
    break_even,
    idle_of,
    idle_over_halt,
    idle_share,
    idle_value,
    net_per_episode,
    net_value,
    never_acts,
    over_doing_nothing,
    parse_prices,
    prices,
    shares,
    value_bounds,
    value_per_episode,
    value_sums,
)

__all__ = [
    "ALL_CATEGORIES",
    "BOOTSTRAP_RESAMPLES",
    "BOOTSTRAP_SEED",
    "CLUSTERED_METHOD",
    "CODED_COLUMNS",
    "COLLATERAL_COLUMN",
    "CONFIDENCE",
    "Cell",
    "ClusteredInterval",
    "Coded",
    "CodedFrame",
    "Components",
    "CostSummary",
    "SubstrateUsage",
    "DEFAULT_PRICES",
    "Difference",
    "EVENTS",
    "FRAME_COLUMNS",
    "HARM_NAMES",
    "Interval",
    "LatencySummary",
    "MAX_PRICE",
    "ONE_SIDED_ALPHA",
    "PAIRED_METHOD",
    "PAIRED_TASK_METHOD",
    "PAIRED_VALUE_METHOD",
    "PASS_K",
    "PER",
    "POWER",
    "PRICE_PRESETS",
    "PairedDifference",
    "PriceError",
    "Prices",
    "RATE_OUTCOMES",
    "RECEIPT_EVENTS",
    "Rate",
    "Results",
    "SPREAD_TOLERANCE",
    "SUBSTRATE_RATES",
    "TaskRate",
    "TaskTable",
    "DEAD_EVENTS",
    "DeadUnits",
    "dead_units",
    "joined",
    "VALUE_EVENTS",
    "VALUE_METHOD",
    "ValueEstimate",
    "Z95",
    "across_substrates",
    "bootstrap_mean",
    "break_even",
    "clustered_wilson",
    "combine",
    "components",
    "correlation",
    "design_effect",
    "episode_events",
    "episode_frame",
    "family_confidence",
    "frame_from_columns",
    "idle_over_halt",
    "idle_of",
    "idle_share",
    "idle_value",
    "min_shared_tasks",
    "minimum_detectable_difference",
    "FIXED_MDD_METHOD",
    "MIN_SHARED_UNITS",
    "PAIRED_MDD_METHOD",
    "RESOLUTION_MEASURES",
    "Resolution",
    "per_unit_measure",
    "resolution",
    "net_per_episode",
    "net_value",
    "never_acts",
    "over_doing_nothing",
    "paired_difference",
    "parse_prices",
    "pass_hat_k",
    "prices",
    "rate",
    "rate_difference",
    "contamination_delta",
    "rate_over_tasks",
    "shares",
    "square_and_add",
    "substrate_difference",
    "substrate_totals",
    "substrate_usage",
    "summarize",
    "task_rate",
    "task_table",
    "transactional_faults_mishandled",
    "value_bounds",
    "value_difference",
    "value_per_episode",
    "value_sums",
    "CLUSTER_METHOD",
    "ClusterDifference",
    "cluster_difference",
    "t_quantile",
    "t_table",
    "t_two_sided",
    "wilson",
    "worst_case_rate",
    "z_of",
    "zero_upper_bound",
]
