"""Key names to X keysyms, shared by the XTest and the RFB envs.

Combos use xdotool syntax (``"ctrl+s"``, ``"Return"``, ``"shift+Tab"``): names
joined by ``+``, each an X keysym name or a common alias. RFB key events carry
the same keysyms, so both remote and local envs press exactly the same keys.
An unknown name or a control character is an :class:`ActionError` (the
agent's tool error), never a silent no-op.
"""

from __future__ import annotations

from Xlib import XK

from effectbench.computer import ActionError

ALIASES = {
    "ctrl": "Control_L",
    "control": "Control_L",
    "alt": "Alt_L",
    "shift": "Shift_L",
    "super": "Super_L",
    "meta": "Meta_L",
    "cmd": "Super_L",
    "win": "Super_L",
    "enter": "Return",
    "return": "Return",
    "esc": "Escape",
    "escape": "Escape",
    "tab": "Tab",
    "backspace": "BackSpace",
    "delete": "Delete",
    "del": "Delete",
    "space": "space",
    "up": "Up",
    "down": "Down",
    "left": "Left",
    "right": "Right",
    "home": "Home",
    "end": "End",
    "pageup": "Prior",
    "pagedown": "Next",
    "page_up": "Prior",
    "page_down": "Next",
    "insert": "Insert",
}


def keysym(name: str) -> int:
    """Return the keysym of one key name, or raise :class:`ActionError`."""
    if not name:
        raise ActionError("empty key name in combo")
    alias = ALIASES.get(name.lower())
    if alias is not None:
        return int(XK.string_to_keysym(alias))
    code = int(XK.string_to_keysym(name))
    if code:
        return code
    if len(name) == 1:
        return char_keysym(name)
    raise ActionError(f"unknown key name {name!r}")


def combo(text: str) -> list[int]:
    """Return the keysyms of an xdotool-style combo, modifiers first."""
    if not isinstance(text, str) or not text.strip():
        raise ActionError("a key combo is a non-empty string such as 'ctrl+s'")
    parts = text.strip().split("+")
    if text.strip().endswith("+"):  # "ctrl++" means ctrl and the plus key
        parts = [*parts[:-2], "plus"] if len(parts) > 2 else ["plus"]
    return [keysym(p.strip()) for p in parts]


def char_keysym(char: str) -> int:
    """Return the keysym that types ``char`` (printable text, tab and newline only)."""
    if char == "\n":
        return int(XK.string_to_keysym("Return"))
    if char == "\t":
        return int(XK.string_to_keysym("Tab"))
    code = ord(char)
    if code < 0x20 or 0x7F <= code < 0xA0:
        raise ActionError(f"text contains the control character {code:#04x}")
    return code if code < 0x100 else 0x01000000 | code


def text_keysyms(text: str) -> list[int]:
    """Return the keysyms that type ``text``, refusing control characters up front."""
    if not isinstance(text, str):
        raise ActionError("text must be a string")
    return [char_keysym(c) for c in text]
