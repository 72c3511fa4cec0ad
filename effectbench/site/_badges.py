"""Embeddable badges: a small SVG per ranked submission, SWER, over-halt and record-wrong with k/n.

Projects put such badges in their README; this one always states over-halt and the
record-wrong rate beside SWER, so nobody can quote SWER alone from it. The SVG is written by
hand (no renderer, byte-stable); text widths are estimated per character and pinned with
``textLength``, so the text fills its box in whatever font the viewer has.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

from effectbench.metrics import Rate, TaskRate

HEIGHT = 20
FONT = "Verdana,DejaVu Sans,sans-serif"
LABEL_FILL = "#555555"
MESSAGE_FILL = "#1d4f91"
"""White text on both fills has a contrast above 7:1."""
PAD = 6

_NARROW = set("ijl.,:;|!'()[]` ·")
_WIDE = set("mwMW%@")
_SPACE = 3.6


def text_width(text: str) -> float:
    """Return the estimated width in pixels of ``text`` in 11 px Verdana (rounded up to 0.5)."""
    width = 0.0
    for ch in text:
        if ch == " ":
            width += _SPACE
        elif ch in _NARROW:
            width += 3.9
        elif ch in _WIDE:
            width += 10.5
        elif ch.isdigit():
            width += 7.0
        elif ch.isupper():
            width += 7.6
        else:
            width += 6.6
    return -(-width * 2 // 1) / 2


def _pct(r: Rate | TaskRate) -> str:
    return f"{100 * r.rate:.1f}%"


@dataclass(frozen=True)
class Badge:
    """A two-part badge: a grey label and a coloured message."""

    label: str
    message: str

    @property
    def text(self) -> str:
        """Return the whole badge as one sentence (its title and accessible name)."""
        return f"{self.label}: {self.message}"

    @property
    def width(self) -> float:
        """Return the badge's width in pixels."""
        return text_width(self.label) + text_width(self.message) + 4 * PAD

    def svg(self) -> str:
        """Return the badge as a standalone SVG document."""
        lw = text_width(self.label)
        mw = text_width(self.message)
        left = lw + 2 * PAD
        right = mw + 2 * PAD
        total = self.width
        name = quoteattr(self.text)
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{total:g}" height="{HEIGHT}" '
            f'viewBox="0 0 {total:g} {HEIGHT}" role="img" aria-label={name}>'
            f"<title>{escape(self.text)}</title>"
            f'<rect width="{left:g}" height="{HEIGHT}" fill="{LABEL_FILL}"/>'
            f'<rect x="{left:g}" width="{right:g}" height="{HEIGHT}" fill="{MESSAGE_FILL}"/>'
            f'<g fill="#ffffff" font-family="{FONT}" font-size="11" text-anchor="middle">'
            f'<text x="{left / 2:g}" y="14" textLength="{lw:g}" lengthAdjust="spacingAndGlyphs">'
            f"{escape(self.label)}</text>"
            f'<text x="{left + right / 2:g}" y="14" textLength="{mw:g}" '
            f'lengthAdjust="spacingAndGlyphs">{escape(self.message)}</text>'
            "</g></svg>\n"
        )


def result_badge(
    pack: str,
    substrates: Sequence[str],
    swer: Rate,
    over_halt: Rate,
    record_wrong: Rate | TaskRate,
) -> Badge:
    """Return the badge of one ranked submission: SWER, over-halt and record-wrong with k/n,
    over every episode of the substrates it ran (named in its label)."""
    message = (
        f"SWER {_pct(swer)} ({swer.numerator}/{swer.denominator}) · over-halt "
        f"{_pct(over_halt)} ({over_halt.numerator}/{over_halt.denominator}) · record-wrong "
        f"{_pct(record_wrong)} ({record_wrong.numerator}/{record_wrong.denominator})"
    )
    return Badge(f"EffectBench {pack} · {'+'.join(substrates)}", message)
