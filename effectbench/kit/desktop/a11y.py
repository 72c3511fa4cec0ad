"""Driving a desktop app through its accessibility tree, as native RPA tools do.

The pieces every scripted arm on the ``desktop`` substrate uses (:func:`walk`, :func:`find`,
:func:`until`, :func:`press`: find controls by role and accessible name, act, and re-read
the tree until it has answered and settled, never a fixed sleep, bounded by
:data:`TIMEOUT_S`), and :class:`A11yForms`, which fills a pack's declared forms
(:mod:`effectbench.kit.forms`) by their accessible names on the kit's renderer
(:mod:`.render`): the :class:`~effectbench.kit.forms.FormDriver` of the desktop, as
:class:`~effectbench.kit.pixels.PixelForms` is of the web app and the remote display, so one
pack script drives all three.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from effectbench.computer import A11yNode, AccessibleComputerEnv
from effectbench.kit import pixels
from effectbench.kit.forms import Button, Check, Choice, Entry
from effectbench.seam import Screen

__all__ = [
    "TIMEOUT_S",
    "A11yForms",
    "click_until",
    "DriverError",
    "drawing",
    "find",
    "press",
    "status_bar",
    "until",
    "walk",
]

TIMEOUT_S = 10.0
"""How long the driver waits for the app to answer an action."""
STATUSES = ("idle", "success", "error")


class DriverError(RuntimeError):
    """The screen was not what the script expects (the run scores it as the arm's halt)."""


def walk(node: A11yNode) -> Iterator[A11yNode]:
    """Yield ``node`` and every descendant, depth first."""
    yield node
    for child in node.children:
        yield from walk(child)


def find(tree: A11yNode, role: str, name: str) -> A11yNode | None:
    """Return the first showing node with ``role`` and accessible ``name``."""
    for node in walk(tree):
        if node.role == role and node.name == name and "showing" in node.states:
            return node
    return None


def status_bar(tree: A11yNode) -> A11yNode:
    """Return the app's status bar (the banner)."""
    for node in walk(tree):
        if node.role == "status bar":
            return node
    raise DriverError("the app has no status bar on the accessibility tree")


def drawing(tree: A11yNode) -> bool:
    """Say whether a control is still being put on the screen (visible, not yet showing).

    The tree lists the children of showing nodes only, so a listed node that is
    visible but not showing has just been added and not yet mapped: a read taken
    then is half-way through an update, however many reads agree.
    """
    return any("visible" in n.states and "showing" not in n.states for n in walk(tree))


def until(env: AccessibleComputerEnv, ready: Callable[[A11yNode], bool], what: str) -> A11yNode:
    """Re-read the tree until ``ready`` holds and two reads in a row agree (settled)."""
    deadline = time.monotonic() + TIMEOUT_S
    last: A11yNode | None = None
    while True:
        tree = env.a11y_tree()
        if ready(tree) and tree == last and not drawing(tree):
            return tree
        last = tree
        if time.monotonic() > deadline:
            raise DriverError(f"the app did not {what} within {TIMEOUT_S} s")


def _banner_text(tree: A11yNode) -> str:
    return status_bar(tree).text


def press(
    env: AccessibleComputerEnv,
    tree: A11yNode,
    name: str,
    mark: Callable[[A11yNode], str] = _banner_text,
) -> A11yNode:
    """Click push button ``name``; return the tree once the status bar's ``mark`` (its
    text, unless told) changed and the tree settled."""
    node = find(tree, "push button", name)
    if node is None:
        raise DriverError(f"no button {name!r} on the screen")
    return click_until(env, tree, node, mark, f"answer {name!r}")


def click_until(
    env: AccessibleComputerEnv,
    tree: A11yNode,
    node: A11yNode,
    mark: Callable[[A11yNode], str],
    what: str,
) -> A11yNode:
    """Click ``node``; return the tree once ``mark`` differs from ``tree``'s and settled."""
    before = mark(tree)
    env.a11y_action(node.id, "click")
    return until(env, lambda t: mark(t) != before, what)


def _status(tree: A11yNode) -> str:
    word = status_bar(tree).description.split(" ", 1)[0]
    return word if word in STATUSES else "error"


def _answers(tree: A11yNode) -> str:
    """The status bar's description: its status and how many replies it has painted."""
    return status_bar(tree).description


class A11yForms:
    """Fill declared forms on the kit's renderer by their accessible names (AT-SPI)."""

    def __init__(self, env: AccessibleComputerEnv, listing: str) -> None:
        self.env = env
        self._listing = listing
        self.tree = env.a11y_tree()

    def _node(self, role: str, name: str) -> A11yNode:
        node = find(self.tree, role, name)
        if node is None:
            raise DriverError(f"no {role} {name!r} on the screen")
        return node

    def fill(self, field: Entry, text: str) -> None:
        """Set the text of the field named by ``field``'s caption."""
        self.env.a11y_set_text(self._node("text", field.label).id, text)

    def choose(self, choice: Choice, value: str) -> None:
        """Click the option of ``value`` by its text (nothing when there is none)."""
        text = next((t for v, t, _ in choice.options if v == value), None)
        if text is not None:
            self.env.a11y_action(self._node("radio button", text).id, "click")

    def tick(self, check: Check) -> None:
        """Click the check box named by ``check``'s caption."""
        self.env.a11y_action(self._node("check box", check.label).id, "click")

    def submit(self, button: Button) -> None:
        """Press ``button``; keep the tree once the app has painted its answer."""
        self.tree = press(self.env, self.tree, button.label, _answers)

    def _rows(self) -> list[A11yNode]:
        rows = [
            n
            for n in walk(self.tree)
            if n.role == "push button" and n.description == self._listing and "showing" in n.states
        ]
        return sorted(rows, key=lambda n: n.extents[1])

    def has_result(self) -> bool:
        """Say whether the listing shows a row."""
        return bool(self._rows())

    def open_result(self) -> None:
        """Press the listing's first row."""
        rows = self._rows()
        if not rows:
            raise DriverError("no row in the list to open")
        self.tree = click_until(self.env, self.tree, rows[0], _answers, "open the first row")

    def screen(self) -> Screen:
        """The status bar's status and text, once the banner's pixels show that status (the
        tree can be ahead of the screen on a loaded machine; the receipt's last frame should
        be the one the driver read)."""
        status = _status(self.tree)
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() <= deadline:
            if pixels.banner_status(self.env.screenshot()) == status:
                break
        return Screen(status=status, banner=status_bar(self.tree).text)
