"""The desktop clinic's fixed layout: where every widget sits, in screen pixels.

The GTK front end places its widgets at these rectangles (a ``Gtk.Fixed`` in
an undecorated window at the origin of a 1024x768 screen), and the pixel
baselines click their centres: the "recorded coordinates" an RPA bot replays
on a fixed layout. A test reads the same rectangles back through AT-SPI
(extents), so the table cannot drift from what is on the screen.

Standard library only: the app imports it by path, without the package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the app imports this module by path, without numpy
    import numpy as np
    from numpy.typing import NDArray

Rect = tuple[int, int, int, int]
"""``(x, y, width, height)`` in screen pixels."""

SCREEN = (1024, 768)
FONT = "DejaVu Sans"
FONT_PX = 13
"""One font, one size, no antialiasing (set by the app): glyphs are exact bitmaps."""

TITLE: Rect = (12, 8, 1000, 24)
REFERRAL: Rect = (12, 36, 1000, 24)
BANNER: Rect = (0, 66, 1024, 36)
BANNER_PROBE = (6, 84)
"""A banner pixel no text covers: its colour is the banner's status."""

BANNER_RGB = {"idle": (224, 224, 224), "success": (46, 125, 50), "error": (198, 40, 40)}
"""The banner background per status (text is white on success and error, black on idle)."""


def banner_status(pixels: NDArray[np.uint8]) -> str:
    """Return the status whose banner colour is nearest a screenshot's pixel at the probe."""
    x, y = BANNER_PROBE
    colour = tuple(int(v) for v in pixels[y, x])
    return min(
        BANNER_RGB,
        key=lambda s: sum((a - b) ** 2 for a, b in zip(colour, BANNER_RGB[s], strict=True)),
    )


BACKGROUND_RGB = (255, 255, 255)

# -- search view ------------------------------------------------------------------------
NAME_LABEL: Rect = (20, 126, 110, 32)
NAME_ENTRY: Rect = (140, 126, 300, 34)
SEARCH_BUTTON: Rect = (460, 126, 110, 34)
MRN_LABEL: Rect = (20, 170, 110, 32)
MRN_ENTRY: Rect = (140, 170, 300, 34)
OPEN_MRN_BUTTON: Rect = (460, 170, 110, 34)

ROWS_TOP = 250
ROW_HEIGHT = 42
MAX_ROWS = 10
HEADER_Y = 218


def row_y(index: int) -> int:
    """Return the top of list row ``index`` (results and encounters alike)."""
    return ROWS_TOP + index * ROW_HEIGHT


RESULT_COLUMNS = {"name": (20, 230), "dob": (260, 150), "mrn": (420, 120)}
"""Result-list cells: ``(x, width)``; each row's cells are ``ROW_HEIGHT - 8`` (34) high."""
RESULT_OPEN_X, RESULT_OPEN_W = 560, 80

# -- chart view -------------------------------------------------------------------------
PATIENT_LINE: Rect = (20, 126, 700, 32)
ALLERGY_LINE: Rect = (20, 166, 700, 32)
BACK_BUTTON: Rect = (860, 126, 144, 34)
NEW_BUTTON: Rect = (860, 166, 144, 34)
ENCOUNTER_COLUMNS = {"id": (20, 70), "type": (100, 120), "status": (230, 90), "note": (330, 500)}
ENCOUNTER_EDIT_X, ENCOUNTER_EDIT_W = 860, 80

# -- encounter form (new and edit) ------------------------------------------------------
FORM_TITLE: Rect = (20, 126, 800, 32)
TYPES = ("Triage", "Follow-up", "Urgent", "Consult")
TYPE_RADIOS: dict[str, Rect] = {
    "Triage": (160, 172, 110, 28),
    "Follow-up": (280, 172, 120, 28),
    "Urgent": (410, 172, 110, 28),
    "Consult": (530, 172, 110, 28),
}
TYPE_LABEL: Rect = (20, 172, 130, 28)
NOTE_LABEL: Rect = (20, 214, 130, 32)
NOTE_ENTRY: Rect = (160, 214, 600, 34)
SIGN_CHECK: Rect = (160, 262, 200, 28)
CHARGE_LABEL: Rect = (20, 302, 130, 32)
CHARGE_ENTRY: Rect = (160, 302, 200, 34)
CLAIM_LABEL: Rect = (20, 346, 130, 32)
CLAIM_ENTRY: Rect = (160, 346, 300, 34)
SAVE_BUTTON: Rect = (160, 400, 110, 34)
CANCEL_BUTTON: Rect = (290, 400, 110, 34)


def centre(rect: Rect) -> tuple[int, int]:
    """Return the centre of ``rect``."""
    x, y, w, h = rect
    return x + w // 2, y + h // 2


def cell(columns: dict[str, tuple[int, int]], column: str, index: int) -> Rect:
    """Return the rectangle of ``column`` in list row ``index``."""
    x, width = columns[column]
    return x, row_y(index), width, ROW_HEIGHT - 8
