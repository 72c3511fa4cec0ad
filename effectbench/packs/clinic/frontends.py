"""Front ends of the clinic: one per substrate, all over the same faulty record service.

A front end is how an agent reaches the clinic on one substrate: the JSON actions (``api``),
the web app in a browser (``web``), a GTK app (``desktop``) or that app over VNC
(``remote_display``). Each task of the pack exists once per front end of :data:`FRONT_ENDS`,
as its own variant (``clinic::NAME`` on ``api``, ``clinic::NAME@web``, ...); the fault lives
in the record service and the one oracle judges every variant. The ``api`` and ``web`` front
ends are the kit's (:mod:`effectbench.kit.frontends`) with the clinic's env and scripts; the
desktop ones are the clinic's own (:mod:`.desktop.frontend`).
"""

from __future__ import annotations

from effectbench.frontends import FrontEnd as FrontEnd
from effectbench.frontends import FrontEndSession as FrontEndSession
from effectbench.kit.frontends import ApiFrontEnd, FrontEnds, WebFrontEnd
from effectbench.packs.clinic.careful import look
from effectbench.packs.clinic.env import ClinicEnv
from effectbench.packs.clinic.tasks import attempt
from effectbench.schema import Substrate

FRONT_ENDS = FrontEnds(
    "clinic",
    {
        Substrate.API: "effectbench.packs.clinic.frontends:api",
        Substrate.WEB: "effectbench.packs.clinic.frontends:web",
        Substrate.DESKTOP: "effectbench.packs.clinic.desktop.frontend:DesktopFrontEnd",
        Substrate.REMOTE_DISPLAY: "effectbench.packs.clinic.desktop.frontend:RemoteDisplayFrontEnd",
    },
)
"""Every front end of the clinic, in manifest order: substrate -> ``module:factory``."""
variant_id = FRONT_ENDS.variant_id


def api() -> ApiFrontEnd:
    """The clinic's own JSON actions over HTTP (substrate ``api``), with what reading before
    writing means on them (:mod:`.careful`)."""
    return ApiFrontEnd(ClinicEnv, attempt, look)


def web() -> WebFrontEnd:
    """The clinic's web app in a browser, driven by pixels (substrate ``web``)."""
    from effectbench.packs.clinic.web import layout, pixels

    choices = {
        "encounters.type": tuple(layout.TYPE_RADIO),
        "billing.code": tuple(layout.CHARGE_RADIO),
    }
    return WebFrontEnd(ClinicEnv, pixels.attempt, choices=choices)
