"""The agent's handles on the desktop clinic: an X or RFB env plus the product's readback.

Both envs are the generic screen envs of :mod:`effectbench.screens` with the
clinic's REST readbacks attached: :meth:`product_effect_verifier` reads the
encounters endpoint, :meth:`all_surfaces_verifier` every surface (what the
``effect_verified_all`` arm asks for). Neither is the harness oracle.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from effectbench.packs.clinic.env import RestVerifier
from effectbench.screens.rfb import RemoteDisplayEnv
from effectbench.screens.xdisplay import A11yReader, AccessibleXEnv


class Readback(Protocol):
    """The clinic product's own REST readbacks."""

    def encounters(self) -> RestVerifier: ...

    def all_surfaces(self) -> RestVerifier: ...


class ClinicAccessibleEnv(AccessibleXEnv):
    """The desktop clinic: XTest, screenshots, AT-SPI and the REST readbacks."""

    def __init__(
        self, display_name: str, xauthority: Path, reader: A11yReader, readback: Readback
    ) -> None:
        super().__init__(display_name, reader, readback.encounters, xauthority=xauthority)
        self._surfaces = readback.all_surfaces

    def all_surfaces_verifier(self) -> RestVerifier:
        """Return the readback over every REST surface."""
        return self._surfaces()


class ClinicRemoteEnv(RemoteDisplayEnv):
    """The clinic over VNC: one RFB connection and the REST readbacks."""

    def __init__(self, rfb_path: Path, readback: Readback) -> None:
        super().__init__(rfb_path, readback.encounters)
        self._surfaces = readback.all_surfaces

    def all_surfaces_verifier(self) -> RestVerifier:
        """Return the readback over every REST surface."""
        return self._surfaces()
