"""Wilson 95% intervals against known values."""

from __future__ import annotations

import pytest

from effectbench.metrics import rate, wilson


def test_fifty_of_ninety() -> None:
    lo, hi = wilson(50, 90)
    assert float(lo) == pytest.approx(0.45272, abs=5e-6)
    assert float(hi) == pytest.approx(0.65384, abs=5e-6)


def test_known_values_from_the_reference() -> None:
    r = rate(15, 27)
    assert r.ci.lo == pytest.approx(0.3731302451322448, abs=1e-12)
    assert r.ci.hi == pytest.approx(0.72414141822977, abs=1e-12)
    zero = rate(0, 27)
    assert zero.ci.lo == pytest.approx(0.0, abs=1e-12)
    assert zero.ci.hi == pytest.approx(0.12455502974186705, abs=1e-12)
    full = rate(3, 3)
    assert full.ci.lo == pytest.approx(0.4385029682449546, abs=1e-12)
    assert full.ci.hi == pytest.approx(1.0, abs=1e-12)


def test_empty_denominator_is_the_whole_unit_interval() -> None:
    r = rate(0, 0)
    assert (r.rate, r.ci.lo, r.ci.hi) == (0.0, 0.0, 1.0)
