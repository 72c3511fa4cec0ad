"""The fixed layout of the support desk's pages: one table the HTML and the pixel bots share.

Every control the pixel baselines touch sits at an absolute position in EffectBench's fixed
page frame (:mod:`effectbench.api.pages`: the 1024x640 viewport, the banner, the result rows),
so a recorded coordinate always lands on the same control (the way an RPA bot is recorded
against a fixed screen). The stylesheet is generated from these boxes
(:func:`effectbench_ticketing.web.app.stylesheet`), so the pages and the bots cannot drift
apart; a browser test checks each box against the rendered page.
"""

from __future__ import annotations

from effectbench.api import pages
from effectbench_ticketing.db import AGENTS, SLA_PLANS

Box = pages.Box

# the search page
SEARCH_NAME = Box(24, 112, 300, 30)
SEARCH_DOMAIN = Box(340, 112, 200, 30)
SEARCH_CODE = Box(556, 112, 120, 30)
SEARCH_BUTTON = Box(692, 110, 110, 34)
OPEN_TICKET_ID = Box(826, 112, 80, 30)
OPEN_TICKET_BUTTON = Box(916, 110, 84, 34)

# the account page (its new-ticket form)
SUBJECT = Box(24, 176, 476, 30)
PRIORITY_RADIO = {
    "normal": Box(24, 224, 110, 24),
    "high": Box(140, 224, 100, 24),
    "urgent": Box(246, 224, 110, 24),
    "low": Box(362, 224, 90, 24),
}
"""One radio per priority the desk takes (:data:`~effectbench_ticketing.db.PRIORITIES`; the
first three where they always were, ``low`` after them)."""
DESCRIPTION = Box(24, 272, 476, 100)
CREDIT = Box(24, 388, 240, 24)
SLA_RADIO = {code: Box(24 + 106 * i, 424, 100, 24) for i, (code, _, _) in enumerate(SLA_PLANS)}
CREDIT_REF = Box(24, 468, 300, 30)
SAVE = Box(24, 516, 120, 36)
TICKET_LIST = Box(540, 176, 460, 440)

# the ticket page (its reassign form)
ASSIGNEE_RADIO = {
    agent_id: Box(24, 176 + 30 * i, 300, 24) for i, (agent_id, _, _) in enumerate(AGENTS)
}
COMMENT = Box(24, 340, 476, 100)
REASSIGN_SAVE = Box(24, 456, 120, 36)
COMMENT_LIST = Box(540, 176, 460, 440)
