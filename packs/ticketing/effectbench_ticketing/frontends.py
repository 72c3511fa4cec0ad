"""Front ends of the support desk: one per substrate, all over the same faulty service.

A front end is how an agent reaches the desk on one substrate: the JSON actions (``api``) or
the web app in a browser (``web``), EffectBench's own (:class:`effectbench.api.ApiFrontEnd`,
:class:`effectbench.api.WebFrontEnd`) with the desk's env and scripted attempts. Each task
exists once per front end of :data:`FRONT_ENDS`, as its own variant (``ticketing::NAME`` on
``api``, ``ticketing::NAME@web``); the fault lives in the app's persistence boundary and the
one oracle judges every variant. The web front end is imported only when used, so the ``api``
substrate never loads a browser.
"""

from __future__ import annotations

from effectbench.api import ApiFrontEnd, FrontEnds, Substrate, WebFrontEnd
from effectbench_ticketing.careful import look
from effectbench_ticketing.env import TicketingEnv
from effectbench_ticketing.tasks import attempt

FRONT_ENDS = FrontEnds(
    "ticketing",
    {
        Substrate.API: "effectbench_ticketing.frontends:api",
        Substrate.WEB: "effectbench_ticketing.frontends:web",
    },
)
"""Every front end, in manifest order: substrate -> ``module:factory``."""


def api() -> ApiFrontEnd:
    """The desk's own JSON actions over HTTP (substrate ``api``), with what reading before
    writing means on them (:mod:`.careful`)."""
    return ApiFrontEnd(TicketingEnv, attempt, look)


def web() -> WebFrontEnd:
    """The desk's web app in a browser, driven by pixels (substrate ``web``)."""
    from effectbench_ticketing.web import pixels

    return WebFrontEnd(TicketingEnv, pixels.attempt)
