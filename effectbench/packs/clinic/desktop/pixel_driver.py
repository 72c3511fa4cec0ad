"""The baselines' scripted attempt on the desktop app by pixels, as an RPA bot does it.

The bot sees only screenshots (PNG) and acts with the pointer and keys of a
:class:`~effectbench.computer.ComputerEnv`; on the remote display that is all
there is. It knows the fixed layout (:mod:`.layout`: recorded coordinates)
and reads text with *image anchors*: it renders the text it looks for (an
MRN, a birth date, an encounter id) in the app's font with Pango, without
antialiasing as the app draws it, and compares the ink with a list cell's
ink. After every click that submits, it polls screenshots until the banner
changed and the screen holds still (never a fixed sleep, bounded by
:data:`TIMEOUT_S`); the banner's colour is the status it reports.

Its choices mirror the API-level attempt: the chart whose MRN matches the
referral, else the first whose birth date matches, else the first listed.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from effectbench.computer import ComputerEnv, images
from effectbench.kit.desktop.a11y import DriverError
from effectbench.packs.clinic.desktop import layout as L
from effectbench.packs.clinic.tasks import ClinicTask
from effectbench.seam import Screen

TIMEOUT_S = 10.0
"""How long the bot waits for the app to answer a click."""
INK = 128
"""A pixel darker than this (in every channel's minimum) is ink."""
_WORDS = {"success": "green banner", "error": "red banner", "idle": "grey banner"}


def _ink(pixels: NDArray[np.uint8]) -> NDArray[np.bool_]:
    ink: NDArray[np.bool_] = pixels.min(axis=2) < INK
    return ink


def _trim(mask: NDArray[np.bool_]) -> NDArray[np.bool_] | None:
    rows = np.flatnonzero(mask.any(axis=1))  # plain index arrays: numpy's stubs differ by version
    cols = np.flatnonzero(mask.any(axis=0))
    if rows.size == 0:
        return None
    return mask[int(rows[0]) : int(rows[-1]) + 1, int(cols[0]) : int(cols[-1]) + 1]


@lru_cache(maxsize=256)
def anchor(text: str) -> bytes:
    """Render ``text`` as the app draws it; return its trimmed ink (shape-prefixed bytes)."""
    import cairo
    import gi

    gi.require_version("Pango", "1.0")
    gi.require_version("PangoCairo", "1.0")
    from gi.repository import Pango, PangoCairo

    width, height = 12 * max(1, len(text)) + 20, 3 * L.FONT_PX
    surface = cairo.ImageSurface(cairo.FORMAT_RGB24, width, height)
    context = cairo.Context(surface)
    context.set_source_rgb(1, 1, 1)
    context.paint()
    context.set_source_rgb(0, 0, 0)
    options = cairo.FontOptions()
    options.set_antialias(cairo.ANTIALIAS_NONE)
    options.set_hint_style(cairo.HINT_STYLE_FULL)
    options.set_hint_metrics(cairo.HINT_METRICS_ON)
    pango = PangoCairo.create_context(context)
    PangoCairo.context_set_font_options(pango, options)
    PangoCairo.context_set_resolution(pango, 96)
    layout = Pango.Layout.new(pango)
    layout.set_font_description(Pango.FontDescription.from_string(f"{L.FONT} {L.FONT_PX}px"))
    layout.set_text(text, -1)
    PangoCairo.show_layout(context, layout)
    surface.flush()
    stride = surface.get_stride() // 4
    data = np.frombuffer(surface.get_data(), np.uint8).reshape(height, stride, 4)
    mask = _trim(_ink(data[:, :width, 2::-1]))
    if mask is None:
        raise DriverError(f"cannot render an anchor for {text!r}")
    return bytes(mask.shape) + np.packbits(mask).tobytes()


def shows(pixels: NDArray[np.uint8], rect: L.Rect, text: str) -> bool:
    """Say whether cell ``rect`` shows exactly ``text`` (its ink equals the anchor's)."""
    x, y, w, h = rect
    ink = _trim(_ink(pixels[y : y + h, x : x + w]))
    packed = anchor(text)
    if ink is None or ink.shape != (packed[0], packed[1]):
        return False
    want = np.unpackbits(np.frombuffer(packed[2:], np.uint8))[: ink.size].reshape(ink.shape)
    return bool((want.astype(bool) == ink).all())


banner_status = L.banner_status
"""``success``, ``error`` or ``idle`` from the banner's background colour in a screenshot."""


def screen_of(pixels: NDArray[np.uint8]) -> Screen:
    """What the bot concludes from the pixels: the banner's colour."""
    status = banner_status(pixels)
    return Screen(status=status, banner=_WORDS[status])


def _banner(pixels: NDArray[np.uint8]) -> NDArray[np.uint8]:
    x, y, w, h = L.BANNER
    return pixels[y : y + h, x : x + w]


def submit(env: ComputerEnv, point: tuple[int, int]) -> NDArray[np.uint8]:
    """Click ``point``; return the screen once the banner changed and the screen held still."""
    before = _banner(images.pixels(env.screenshot()))
    env.click(*point)
    deadline = time.monotonic() + TIMEOUT_S
    last = b""
    while True:
        shot = env.screenshot()
        pixels = images.pixels(shot)
        if shot == last and not np.array_equal(_banner(pixels), before):
            return pixels
        last = shot
        if time.monotonic() > deadline:
            raise DriverError(f"the screen did not answer a click at {point} in {TIMEOUT_S} s")


def fill(env: ComputerEnv, rect: L.Rect, text: str) -> None:
    """Click into a text field, select what is there and type ``text`` over it."""
    env.click(*L.centre(rect))
    env.key("ctrl+a")
    env.type(text) if text else env.key("Delete")


def _rows(pixels: NDArray[np.uint8], column: tuple[int, int]) -> int:
    """Count the list rows that show ink in ``column``."""
    count = 0
    while count < L.MAX_ROWS:
        x, width = column
        if not _ink(
            pixels[L.row_y(count) : L.row_y(count) + L.ROW_HEIGHT - 8, x : x + width]
        ).any():
            break
        count += 1
    return count


def _button_centre(x: int, width: int, index: int) -> tuple[int, int]:
    return x + width // 2, L.row_y(index) + (L.ROW_HEIGHT - 8) // 2


def attempt(env: ComputerEnv, task: ClinicTask, params: Mapping[str, Any]) -> Screen:
    """Find, open, fill and save (or edit) by pixels; return what the banner shows."""
    if task.kind == "edit":
        fill(env, L.MRN_ENTRY, str(params["mrn"]))
        chart = submit(env, L.centre(L.OPEN_MRN_BUTTON))
        rows = _rows(chart, L.ENCOUNTER_COLUMNS["id"])
        target = str(params["encounter_id"])
        index = next(
            (i for i in range(rows) if shows(chart, L.cell(L.ENCOUNTER_COLUMNS, "id", i), target)),
            None,
        )
        if index is None:
            return screen_of(chart)
        submit(env, _button_centre(L.ENCOUNTER_EDIT_X, L.ENCOUNTER_EDIT_W, index))
        fill(env, L.NOTE_ENTRY, str(params["note"]))
        return screen_of(submit(env, L.centre(L.SAVE_BUTTON)))
    fill(env, L.NAME_ENTRY, str(params["patient_name"]))
    found = submit(env, L.centre(L.SEARCH_BUTTON))
    rows = _rows(found, L.RESULT_COLUMNS["name"])
    if rows == 0:
        return screen_of(found)

    def first(column: str, text: str) -> int | None:
        if not text:
            return None
        cells = (L.cell(L.RESULT_COLUMNS, column, i) for i in range(rows))
        return next((i for i, rect in enumerate(cells) if shows(found, rect, text)), None)

    pick = first("mrn", str(params["mrn"]))
    if pick is None:
        pick = first("dob", str(params["dob"]))
    submit(env, _button_centre(L.RESULT_OPEN_X, L.RESULT_OPEN_W, pick or 0))
    submit(env, L.centre(L.NEW_BUTTON))
    env.click(*L.centre(L.TYPE_RADIOS[str(params["type"])]))
    fill(env, L.NOTE_ENTRY, str(params["note"]))
    if task.kind == "sign":
        env.click(*L.centre(L.SIGN_CHECK))
        fill(env, L.CHARGE_ENTRY, str(params["charge_code"]))
        fill(env, L.CLAIM_ENTRY, str(params["claim_ref"]))
    return screen_of(submit(env, L.centre(L.SAVE_BUTTON)))
