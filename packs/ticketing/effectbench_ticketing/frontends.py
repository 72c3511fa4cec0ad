"""Front ends of the support desk: one per substrate, all over the same faulty service.

A front end is how an agent reaches the desk on one substrate: the JSON actions (``api``),
the web app in a browser (``web``), the desk's declared screens as a GTK app (``desktop``) or
that app over VNC (``remote_display``): EffectBench's own (:class:`effectbench.api.ApiFrontEnd`,
:class:`effectbench.api.WebFrontEnd`, and the kit's declared desktop front ends,
:mod:`effectbench.kit.desktop`) with the desk's env, screens and scripted attempts; no
application is written by hand. Each task
exists once per front end of :data:`FRONT_ENDS`, as its own variant (``ticketing::NAME`` on
``api``, ``ticketing::NAME@web``); the fault lives in the app's persistence boundary and the
one oracle judges every variant. The web front end is imported only when used, so the ``api``
substrate never loads a browser.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from effectbench.api import ApiFrontEnd, FrontEnds, Substrate, WebFrontEnd
from effectbench_ticketing.careful import look
from effectbench_ticketing.env import TicketingEnv
from effectbench_ticketing.tasks import attempt

if TYPE_CHECKING:
    from effectbench.kit.desktop.frontend import DeclaredDesktop, DeclaredRemoteDisplay

FRONT_ENDS = FrontEnds(
    "ticketing",
    {
        Substrate.API: "effectbench_ticketing.frontends:api",
        Substrate.WEB: "effectbench_ticketing.frontends:web",
        Substrate.DESKTOP: "effectbench_ticketing.frontends:desktop",
        Substrate.REMOTE_DISPLAY: "effectbench_ticketing.frontends:remote_display",
    },
)
"""Every front end, in manifest order: substrate -> ``module:factory``."""


def api() -> ApiFrontEnd:
    """The desk's own JSON actions over HTTP (substrate ``api``), with what reading before
    writing means on them (:mod:`.careful`)."""
    return ApiFrontEnd(TicketingEnv, attempt, look)


def web() -> WebFrontEnd:
    """The desk's web app in a browser, driven by pixels (substrate ``web``)."""
    from effectbench_ticketing.web import layout, pixels

    choices = {
        "tickets.priority": tuple(layout.PRIORITY_RADIO),
        "tickets.assignee_id": tuple(layout.ASSIGNEE_RADIO),
        "credits.sla_code": tuple(layout.SLA_RADIO),
    }
    return WebFrontEnd(TicketingEnv, pixels.attempt, choices=choices)


def desktop() -> DeclaredDesktop:
    """The desk's declared screens as a GTK app on Xvfb, driven through AT-SPI (``desktop``)."""
    from effectbench.kit.desktop.frontend import DeclaredDesktop
    from effectbench_ticketing.web import layout, pixels

    return DeclaredDesktop(TicketingEnv, layout.SCREENS, pixels.a11y_attempt)


def remote_display() -> DeclaredRemoteDisplay:
    """The same app on Xvnc, seen over RFB and driven by pixels (``remote_display``)."""
    from effectbench.kit.desktop.frontend import DeclaredRemoteDisplay
    from effectbench_ticketing.web import layout, pixels

    return DeclaredRemoteDisplay(TicketingEnv, layout.SCREENS, pixels.remote_attempt)
