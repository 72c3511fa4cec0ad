"""The clinic's independent oracle: the episode's file, read-only, judged by the kit's rule.

The oracle (:class:`effectbench.kit.sqlite.SqliteOracle`) reads the episode's database file
through its own ``mode=ro`` connection (never through the record service): the schema and
every table, each keyed by its primary key (:func:`effectbench.kit.sqlite.read_database`). It
judges a declared contract and audits every table's change set by
:func:`effectbench.kit.tables.judge_tables`: a collateral write or loss on any table, or in
the schema, is a wrong effect whatever the declared effect says. The product's own readbacks
(:mod:`.env`) apply the same rule to the surfaces they can read over REST, which is exactly
why a readback of one surface misses collateral writes on the others.
"""

from __future__ import annotations

from effectbench.kit.sqlite import SCHEMA, SqliteOracle, read_database

__all__ = ["CHANNEL", "SCHEMA", "SqliteOracle", "read_database"]

CHANNEL = SqliteOracle.channel
