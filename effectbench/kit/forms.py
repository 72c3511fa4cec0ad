"""A pack's screens, declared once: the forms, lists and buttons every screen front end paints.

A kit-built pack already places its web controls on the fixed frame (:mod:`.pages`); this
module says, in one declaration, what those controls *are*: a text field, a check box, a
group of options, a button, the request a form sends, what a view loads and how it lists
what it loaded. The web app takes its captions, option texts and boxes from the
declaration, and the kit's desktop renderer (:mod:`effectbench.kit.desktop`) builds a GTK 3
application from nothing else, so the two screens cannot drift apart: one caption, one box,
one accessible name per control.

Standard library only: the declaration travels to the desktop app as JSON (:func:`as_json`),
so the app never imports a pack (nor the engine).

Text templates (:attr:`View.summary`, :attr:`Listing.text`, request paths and bodies) are
:meth:`str.format` templates over the view's loaded details (``{customer[name]}``) and, in a
request, the form's own fields (``{subject}``) and the view's argument (``{id}``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:
    from effectbench.seam import Screen

__all__ = [
    "Box",
    "Button",
    "Check",
    "Choice",
    "Control",
    "Entry",
    "Form",
    "FormDriver",
    "Listing",
    "Request",
    "Screens",
    "View",
    "as_json",
]


class Box(NamedTuple):
    """A control's box on the screen: left, top, width, height (pixels)."""

    x: int
    y: int
    w: int
    h: int

    @property
    def centre(self) -> tuple[int, int]:
        """Where a bot clicks it."""
        return self.x + self.w // 2, self.y + self.h // 2

    def region(self) -> tuple[int, int, int, int]:
        """Return ``(x0, y0, x1, y1)`` for pixel reads."""
        return self.x, self.y, self.x + self.w, self.y + self.h


class Entry(NamedTuple):
    """A text field: ``key`` is what the form sends, ``label`` its caption and accessible
    name; ``lines`` above 1 makes it a text area."""

    key: str
    label: str
    box: Box
    lines: int = 1


class Check(NamedTuple):
    """A check box; ticked, the form sends ``key`` true and the fields ``sends`` names
    (unticked, neither)."""

    key: str
    label: str
    box: Box
    sends: tuple[str, ...] = ()


class Choice(NamedTuple):
    """A group of options, at most one chosen: ``options`` are ``(value, text, box)``, the
    caption ``label`` (none when blank) is drawn above the first option. With none chosen
    the form leaves ``key`` out, or sends it blank when ``always`` (or a ticked check box
    sends it)."""

    key: str
    label: str
    options: tuple[tuple[str, str, Box], ...]
    always: bool = False

    def boxes(self) -> dict[str, Box]:
        """Each option's box by its value (what a pixel bot clicks)."""
        return {value: box for value, _, box in self.options}


Control = Entry | Check | Choice


class Button(NamedTuple):
    """A push button: its text (and accessible name) and its box."""

    label: str
    box: Box


class Request(NamedTuple):
    """What a form sends (or a view loads): the method and a path template."""

    method: str
    path: str


class Form(NamedTuple):
    """A form: its controls, the button that sends it, and where its reply goes.

    ``then`` is ``"list"`` (the reply's rows fill the view's listing), ``"reload"`` (the
    view is loaded again and the reply's banner painted over it) or ``"open:VIEW"`` (view
    ``VIEW`` opens with the form's only field as its argument; no request is sent).
    ``context`` adds fields taken from the view's details (hidden in the web form);
    ``key``, when set, is the field that carries a fresh idempotency key per form shown
    (``form-ARGUMENT-N``, numbered from 1 in the app, as the web app numbers them).
    ``filters`` narrow a listing: ``(field, row key)``, a row kept when the field is blank
    or equals the row's value.
    """

    name: str
    controls: tuple[Control, ...]
    button: Button
    request: Request | None
    then: str
    context: tuple[tuple[str, str], ...] = ()
    key: str = ""
    filters: tuple[tuple[str, str], ...] = ()


class Listing(NamedTuple):
    """Rows a view lists from its details' ``source``: one line of ``text`` each.

    ``opens``, when set, is ``(VIEW, template)``: each row is a button that opens ``VIEW``
    with the row's formatted argument, at ``box`` moved ``step`` down per row (at most
    ``rows``); otherwise the rows are lines of text inside ``box``. ``empty`` is shown
    when there is no row.
    """

    source: str
    text: str
    box: Box
    step: int
    rows: int
    opens: tuple[str, str] | None = None
    empty: str = ""
    heading: str = ""


class View(NamedTuple):
    """One screen: what it loads (``load``, with the view's argument as ``{id}``), the
    summary lines drawn from the details in ``summary_box``, its forms and its listing, and
    the idle banner it shows when opened empty."""

    name: str
    load: Request | None
    forms: tuple[Form, ...]
    summary: tuple[str, ...] = ()
    summary_box: Box | None = None
    listing: Listing | None = None
    idle: str = ""


class Screens(NamedTuple):
    """A pack's screens: the header's title and colour, the banner's box and colours, the
    result rows' colour, the font, the views (the first is where the app opens, and where a
    failed load returns), and the text a summary shows for an empty value (``none``)."""

    title: str
    accent: str
    banner: Box
    banner_rgb: dict[str, tuple[int, int, int]]
    result_rgb: tuple[int, int, int]
    font: str
    views: tuple[View, ...]
    none: str = ""

    def view(self, name: str) -> View:
        """Return view ``name``."""
        return next(v for v in self.views if v.name == name)

    def form(self, name: str) -> Form:
        """Return form ``name``, whichever view holds it."""
        return next(f for v in self.views for f in v.forms if f.name == name)


def _plain(value: Any) -> Any:
    if isinstance(value, Box):
        return list(value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        kind = type(value).__name__
        fields = {k: _plain(getattr(value, k)) for k in value._fields}
        return {"kind": kind, **fields} if kind in ("Entry", "Check", "Choice") else fields
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def as_json(screens: Screens) -> str:
    """Return the declaration as JSON (what the desktop app is given): records as objects, a
    box as ``[x, y, w, h]``; a control carries its ``kind`` (``Entry``, ``Check``, ``Choice``)."""
    return json.dumps(_plain(screens), separators=(",", ":"), sort_keys=True)


class FormDriver(Protocol):
    """What a pack's screen script does with its declared forms, on any screen."""

    def fill(self, field: Entry, text: str) -> None:
        """Replace the text of ``field`` with ``text``."""
        ...

    def choose(self, choice: Choice, value: str) -> None:
        """Choose option ``value`` (nothing when the form has no such option)."""
        ...

    def tick(self, check: Check) -> None:
        """Tick (or untick) ``check``."""
        ...

    def submit(self, button: Button) -> None:
        """Click ``button`` and wait for the app's answer."""
        ...

    def has_result(self) -> bool:
        """Say whether the listing shows a first row."""
        ...

    def open_result(self) -> None:
        """Open the listing's first row and wait for the answer."""
        ...

    def screen(self) -> Screen:
        """What the script concludes: the banner's status (and text, when it can read it)."""
        ...
