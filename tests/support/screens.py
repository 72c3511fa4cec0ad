"""The clinic's GTK app in a per-episode X session, read through AT-SPI (for the screen tests)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from effectbench.screens.xdisplay import A11yReader, AccessibleXEnv
from effectbench.screens.xsession import XSession

APP = Path(__file__).resolve().parents[2] / "effectbench/packs/clinic/desktop/app.py"


def start_app(session: XSession, port: int = 9, name: str = "app") -> int:
    referral = {"patient_name": "Jonas Berg", "dob": "1975-02-11", "mrn": "M-0101"}
    spawned = session.spawn(
        [sys.executable, "-E", str(APP), "--port", str(port), "--referral", json.dumps(referral)],
        name=name,
        ready_fd=True,
        timeout=30,
    )
    return spawned.pid


def desktop_env(session: XSession, port: int = 9) -> AccessibleXEnv:
    app = start_app(session, port)
    return AccessibleXEnv(session.display, A11yReader(session, app, timeout=30))
