"""The pack kit's web pages: one fixed frame every kit-built web app paints its forms in.

A kit-built pack's web app is server-rendered HTML with no JavaScript, every control at an
absolute position on a fixed 1024x640 viewport (:data:`VIEWPORT`), so a recorded coordinate
always lands on the same control (the way an RPA bot is recorded against a fixed screen). The
frame is the same for every pack: a header, the status banner under it (:data:`BANNER`: green
on success, red on error, grey when idle; :data:`BANNER_RGB`), a list of result rows
(:data:`RESULT_ROW`, :data:`RESULT_STEP`, and :data:`RESULT_PROBE`, a point of the first row
no text covers), one font (:data:`FONT`). The pixel bots (:mod:`effectbench.kit.pixels`) read
those, and a pack's own layout places only its controls (:class:`Box`).

:func:`frame_rules` is the frame's stylesheet (a pack adds one rule per control,
:func:`place`), :func:`document` a page in it, and :func:`label`, :func:`radio` and
:func:`escape` the pieces every form uses; :func:`first_values` reads a query or a form.
"""

from __future__ import annotations

import html
from urllib.parse import parse_qs

from effectbench.computer import Display
from effectbench.kit.forms import Box, Screens, View

__all__ = [
    "BANNER",
    "BANNER_RGB",
    "FONT",
    "RESULT_PROBE",
    "RESULT_RGB",
    "RESULT_ROW",
    "RESULT_STEP",
    "VIEWPORT",
    "Box",
    "document",
    "escape",
    "first_values",
    "frame_rules",
    "label",
    "place",
    "radio",
    "screens",
]

VIEWPORT = Display(1024, 640)
FONT = "DejaVu Sans"
"""The only font the pages use (Debian ``fonts-dejavu-core``, installed by the set-up)."""


BANNER = Box(0, 40, 1024, 40)
"""The status banner: green on success, red on error, grey when idle."""
BANNER_RGB = {"success": (46, 125, 50), "error": (198, 40, 40), "idle": (224, 224, 224)}
"""The banner's background per status (what the bots read)."""
RESULT_ROW = Box(24, 170, 976, 36)
"""The first result row; row ``i`` is ``RESULT_STEP * i`` lower (ten rows at most)."""
RESULT_STEP = 42
RESULT_PROBE = (990, 188)
"""A point of the first result row that text never covers (its background shows)."""
RESULT_RGB = (227, 242, 253)
"""A result row's background."""


def _rgb(c: tuple[int, int, int]) -> str:
    return f"rgb({c[0]},{c[1]},{c[2]})"


def place(selector: str, box: Box) -> str:
    """Return the rule that puts ``selector`` exactly on ``box``."""
    return (
        f"{selector}{{position:absolute;left:{box.x}px;top:{box.y}px;"
        f"width:{box.w}px;height:{box.h}px;box-sizing:border-box;margin:0}}"
    )


def frame_rules(accent: str) -> list[str]:
    """Return the frame's rules: font, page, header (``accent`` its colour and the buttons'),
    banner, labels, inputs, result rows, option labels and tables."""
    w, h = VIEWPORT.width, VIEWPORT.height
    rules = [
        f"*{{font-family:'{FONT}';font-size:14px;caret-color:transparent}}",
        f"html,body{{margin:0;padding:0;width:{w}px;height:{h}px;overflow:hidden;"
        "background:#fff;color:#111}",
        f"header{{position:absolute;left:0;top:0;width:{w}px;height:40px;background:{accent};"
        "color:#fff;line-height:40px;text-indent:24px;font-weight:bold}",
        place("#banner", BANNER),
        "#banner{line-height:40px;text-indent:24px;overflow:hidden;white-space:nowrap}",
        f"#banner.success{{background:{_rgb(BANNER_RGB['success'])};color:#fff}}",
        f"#banner.error{{background:{_rgb(BANNER_RGB['error'])};color:#fff}}",
        f"#banner.idle{{background:{_rgb(BANNER_RGB['idle'])};color:#222}}",
        ".label{position:absolute;font-size:12px;color:#555}",
        "input[type=text],textarea{border:1px solid #888;padding:4px;outline:none;resize:none}",
        f"input[type=text]:focus,textarea:focus{{border:2px solid {accent}}}",
        f"button{{background:{accent};color:#fff;border:0;cursor:default}}",
        "a.row{display:block;text-decoration:none;color:#111;line-height:36px;text-indent:12px;"
        f"background:{_rgb(RESULT_RGB)}}}",
        "p.none{position:absolute;left:24px;top:170px;color:#555}",
        "label.opt{display:block;line-height:24px;white-space:nowrap;overflow:hidden}",
        "label.opt input{margin:0 6px 0 0;vertical-align:middle}",
        "table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;"
        "padding:3px 4px;text-align:left;vertical-align:top;font-size:12px}",
    ]
    rules += [
        place(f"#r{i}", RESULT_ROW._replace(y=RESULT_ROW.y + i * RESULT_STEP)) for i in range(10)
    ]
    return rules


def escape(value: object) -> str:
    """Return ``value`` as text safe in HTML (quotes too)."""
    return html.escape(str(value), quote=True)


def label(text: str, box: Box) -> str:
    """Return a field's caption, drawn just above ``box``."""
    return f'<span class="label" style="left:{box.x}px;top:{box.y - 16}px">{escape(text)}</span>'


def radio(ident: str, name: str, value: str, text: str) -> str:
    """Return one option of a radio group (its label carries ``ident``, where its box is)."""
    return (
        f'<label class="opt" id="{escape(ident)}"><input type="radio" name="{escape(name)}" '
        f'value="{escape(value)}">{escape(text)}</label>'
    )


def document(css: str, header: str, title: str, status: str, banner: str, body: str) -> str:
    """Return a whole page: the frame's header and banner (``status`` its colour) over ``body``."""
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>{escape(title)}</title><style>{css}</style></head><body>"
        f"<header>{escape(header)}</header>"
        f'<div id="banner" class="{escape(status)}">{escape(banner)}</div>'
        f"{body}</body></html>"
    )


def first_values(text: str, *, blanks: bool = False) -> dict[str, str]:
    """Return the first value of each name of a query or a URL-encoded form (``blanks``:
    keep names given empty)."""
    return {k: v[0] for k, v in parse_qs(text, keep_blank_values=blanks).items() if v}


def screens(title: str, accent: str, views: tuple[View, ...], *, none: str = "") -> Screens:
    """Return a pack's screens in this frame: ``title`` in the header (``accent`` its colour
    and the buttons'), the frame's banner, colours and font, and ``views`` (the first opens);
    ``none`` is what a summary shows for a value the record leaves empty."""
    return Screens(title, accent, BANNER, BANNER_RGB, RESULT_RGB, FONT, views, none)
