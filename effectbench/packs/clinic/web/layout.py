"""The fixed layout of the clinic's web pages: one table the HTML and the pixel bots share.

Every control the pixel baselines touch sits at an absolute position in the kit's fixed frame
(:mod:`effectbench.kit.pages`: the 1024x640 viewport, the banner, the result rows), so a
recorded coordinate always lands on the same control (the way an RPA bot is recorded against
a fixed screen). The stylesheet is generated from these boxes
(:func:`effectbench.packs.clinic.web.app.stylesheet`), so the pages and the bots cannot drift
apart; a browser test checks each box against the rendered page.
"""

from __future__ import annotations

from effectbench.kit.pages import BANNER, FONT, VIEWPORT, Box

__all__ = ["BANNER", "FONT", "VIEWPORT", "Box"]

# the search page
SEARCH_NAME = Box(24, 112, 300, 30)
SEARCH_DOB = Box(340, 112, 150, 30)
SEARCH_MRN = Box(506, 112, 150, 30)
SEARCH_BUTTON = Box(672, 110, 120, 34)

# the chart page
TYPE_RADIO = {
    "Triage": Box(24, 160, 110, 24),
    "Follow-up": Box(140, 160, 130, 24),
    "Urgent": Box(276, 160, 110, 24),
    "Consult": Box(392, 160, 110, 24),
}
"""One radio per encounter type the service takes (:data:`~effectbench.packs.clinic.store.
ENCOUNTER_TYPES`, in its order)."""
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
