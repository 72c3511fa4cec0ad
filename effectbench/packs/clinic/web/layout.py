"""The fixed layout of the clinic's web pages: one table the HTML and the pixel bots share.

Every control the pixel baselines touch sits at an absolute position on a fixed
1024x640 viewport, so a recorded coordinate always lands on the same control
(the way an RPA bot is recorded against a fixed screen). The stylesheet is
generated from these boxes (:func:`effectbench.packs.clinic.web.app.stylesheet`),
so the pages and the bots cannot drift apart; a browser test checks each box
against the rendered page.
"""

from __future__ import annotations

from typing import NamedTuple

from effectbench.computer import Display

VIEWPORT = Display(1024, 640)
FONT = "DejaVu Sans"
"""The only font the pages use (Debian ``fonts-dejavu-core``, installed by the set-up)."""


class Box(NamedTuple):
    """A control's box on the viewport: left, top, width, height (CSS pixels)."""

    x: int
    y: int
    w: int
    h: int

    @property
    def centre(self) -> tuple[int, int]:
        """Where a bot clicks it."""
        return self.x + self.w // 2, self.y + self.h // 2

    def region(self) -> tuple[int, int, int, int]:
        """Return ``(x0, y0, x1, y1)`` for pixel reads."""
        return self.x, self.y, self.x + self.w, self.y + self.h


BANNER = Box(0, 40, 1024, 40)
"""The status banner: green on success, red on error, grey when idle."""

# the search page
SEARCH_NAME = Box(24, 112, 300, 30)
SEARCH_DOB = Box(340, 112, 150, 30)
SEARCH_MRN = Box(506, 112, 150, 30)
SEARCH_BUTTON = Box(672, 110, 120, 34)
RESULT_ROW = Box(24, 170, 976, 36)
"""The first result row; row ``i`` is ``RESULT_STEP * i`` lower."""
RESULT_STEP = 42
RESULT_PROBE = (990, 188)
"""A point of the first result row that text never covers (its background shows)."""

# the chart page
TYPE_RADIO = {"Triage": Box(24, 160, 110, 24), "Follow-up": Box(140, 160, 130, 24)}
TYPE_RADIO["Urgent"] = Box(276, 160, 110, 24)
NOTE = Box(24, 200, 476, 100)
SIGN = Box(24, 316, 200, 24)
CHARGE_RADIO = {
    "99213": Box(24, 352, 100, 24),
    "99214": Box(130, 352, 100, 24),
    "99284": Box(236, 352, 100, 24),
}
CLAIM_REF = Box(24, 392, 300, 30)
SAVE = Box(24, 440, 120, 36)
OPEN_ENCOUNTER_ID = Box(540, 112, 150, 30)
OPEN_ENCOUNTER_BUTTON = Box(706, 110, 100, 34)
ENCOUNTER_LIST = Box(540, 160, 460, 460)

# the encounter page
EDIT_NOTE = Box(24, 160, 476, 100)
EDIT_SAVE = Box(24, 280, 120, 36)

SUCCESS_RGB = (46, 125, 50)
ERROR_RGB = (198, 40, 40)
IDLE_RGB = (224, 224, 224)
RESULT_RGB = (227, 242, 253)
"""Background colours the bots read: banners by status, a result row."""
