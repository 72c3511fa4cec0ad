"""An episode's accessibility reader: AT-SPI for one application, over a Unix socket.

Run by path inside the episode's session with nothing but
``AT_SPI_BUS_ADDRESS`` (no ``DISPLAY``, no session bus)::

    python _a11y_helper.py SOCKET APP_PID

It binds ``SOCKET`` (in the episode's private runtime directory), writes
``ready`` on fd 3, and answers one JSON request per line:

* ``{"op": "wait_app", "timeout": S}``: wait until the application with process
  id ``APP_PID`` shows a window on the accessibility desktop;
* ``{"op": "tree"}``: that application's tree, every node with ``id``, ``role``,
  ``name``, ``description``, ``states``, ``text``, ``extents`` (screen
  coordinates) and ``actions``;
* ``{"op": "action", "node": ID, "action": NAME}`` and ``{"op": "set_text",
  "node": ID, "text": TEXT}``.

A node id is ``PID/N`` (the application's process id, the object's number on
its bus). A node of another application, one this reader never listed, or one
that vanished is answered ``{"error": ...}`` (a tool error for the agent), never
acted on. One process per episode keeps each episode on its own bus (the
library keeps one bus connection per process).
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from typing import Any

import gi

gi.require_version("Atspi", "2.0")
from gi.repository import Atspi, GLib  # noqa: E402

MAX_NODES = 2000


class Reader:
    """The accessibility tree of one application, and the nodes it has handed out."""

    def __init__(self, app_pid: int) -> None:
        self.app_pid = app_pid
        self.nodes: dict[str, Atspi.Accessible] = {}

    def _app(self) -> Atspi.Accessible | None:
        desktop = Atspi.get_desktop(0)
        for index in range(desktop.get_child_count()):
            app = desktop.get_child_at_index(index)
            try:
                if app is not None and app.get_process_id() == self.app_pid:
                    return app
            except GLib.Error:
                continue
        return None

    def _app_alive(self) -> bool:
        """Say whether the application process still runs (the bus may not know yet)."""
        try:
            with open(f"/proc/{self.app_pid}/stat", "rb") as handle:
                return handle.read().rsplit(b")", 1)[1].split()[0] != b"Z"
        except OSError:
            return False

    def _pids(self) -> set[int]:
        desktop = Atspi.get_desktop(0)
        found = set()
        for index in range(desktop.get_child_count()):
            try:
                found.add(desktop.get_child_at_index(index).get_process_id())
            except (GLib.Error, AttributeError):
                continue
        return found

    def wait_app(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            app = self._app()
            if app is not None and app.get_child_count() > 0:
                frame = app.get_child_at_index(0)
                states = frame.get_state_set() if frame is not None else None
                if states is not None and states.contains(Atspi.StateType.SHOWING):
                    return {"ok": True}
            if time.monotonic() > deadline:
                return {"error": f"application {self.app_pid} did not appear on the bus"}
            GLib.usleep(5000)

    def _id(self, node: Atspi.Accessible) -> str:
        return f"{self.app_pid}/{str(node.path).rsplit('/', 1)[-1]}"

    def _node(self, node: Atspi.Accessible, budget: list[int]) -> dict[str, Any]:
        budget[0] -= 1
        node_id = self._id(node)
        self.nodes[node_id] = node
        role = node.get_role()
        states = [Atspi.StateType(s).value_nick for s in node.get_state_set().get_states()]
        extents = [0, 0, 0, 0]
        if role != Atspi.Role.APPLICATION:
            rect = node.get_extents(Atspi.CoordType.SCREEN)
            extents = [rect.x, rect.y, rect.width, rect.height]
        text = ""
        if node.get_text_iface() is not None:
            text = node.get_text(0, -1) or ""
        actions = []
        if node.get_action_iface() is not None:
            actions = [node.get_action_name(i) for i in range(node.get_n_actions())]
        children = []
        if "showing" in states or role == Atspi.Role.APPLICATION:
            for index in range(node.get_child_count()):
                child = node.get_child_at_index(index)
                if child is not None and budget[0] > 0:
                    children.append(self._node(child, budget))
        return {
            "id": node_id,
            "role": node.get_role_name(),
            "name": node.get_name() or "",
            "description": node.get_description() or "",
            "states": states,
            "text": text,
            "extents": extents,
            "actions": actions,
            "children": children,
        }

    def tree(self) -> dict[str, Any]:
        app = self._app()
        if app is None:
            return {"error": f"application {self.app_pid} is not on the accessibility bus"}
        return {"tree": self._node(app, [MAX_NODES])}

    def _resolve(self, node_id: str) -> Atspi.Accessible | dict[str, Any]:
        owner, _, _ = str(node_id).partition("/")
        if owner != str(self.app_pid):
            if owner.isdigit() and int(owner) in self._pids():
                return {"error": f"node {node_id} belongs to another application"}
            return {"error": f"no node {node_id} (ids come from a11y_tree)"}
        node = self.nodes.get(node_id)
        if node is None:
            return {"error": f"no node {node_id} (ids come from a11y_tree)"}
        try:  # ask the application itself, not the library's cache
            node.clear_cache()
            states = node.get_state_set()
            gone = states.contains(Atspi.StateType.DEFUNCT) or not states.contains(
                Atspi.StateType.SHOWING
            )
            gone = gone or not self._app_alive()
        except GLib.Error:
            gone = True
        if gone:
            self.nodes.pop(node_id, None)
            return {"error": f"node {node_id} vanished from the screen"}
        return node

    def action(self, node_id: str, action: str) -> dict[str, Any]:
        node = self._resolve(node_id)
        if isinstance(node, dict):
            return node
        if node.get_action_iface() is None:
            return {"error": f"node {node_id} has no actions"}
        names = [node.get_action_name(i) for i in range(node.get_n_actions())]
        if action not in names:
            return {"error": f"node {node_id} has no action {action!r} (has {names})"}
        if not node.do_action(names.index(action)):
            return {"error": f"node {node_id} refused action {action!r}"}
        return {}

    def set_text(self, node_id: str, text: str) -> dict[str, Any]:
        node = self._resolve(node_id)
        if isinstance(node, dict):
            return node
        if node.get_editable_text_iface() is None:
            return {"error": f"node {node_id} is not editable text"}
        if not node.get_state_set().contains(Atspi.StateType.EDITABLE):
            return {"error": f"node {node_id} is read-only"}
        node.set_text_contents(text)
        return {}

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request.get("op")
        if op == "ping":
            return {"ok": True}
        if op == "wait_app":
            return self.wait_app(float(request.get("timeout", 10)))
        if op == "tree":
            return self.tree()
        if op == "action":
            return self.action(str(request.get("node")), str(request.get("action")))
        if op == "set_text":
            return self.set_text(str(request.get("node")), str(request.get("text", "")))
        return {"error": f"unknown op {op!r}"}


def main() -> None:
    """Bind the socket, say ready, serve connections until killed."""
    path, app_pid = sys.argv[1], int(sys.argv[2])
    Atspi.init()
    reader = Reader(app_pid)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    os.chmod(path, 0o600)
    server.listen(1)
    os.write(3, b"ready\n")
    os.close(3)
    while True:
        conn, _ = server.accept()
        with conn, conn.makefile("rwb") as stream:
            for line in stream:
                try:
                    reply = reader.handle(json.loads(line))
                except GLib.Error as exc:  # the object or its application went away mid-call
                    reply = {"error": f"the node vanished ({exc.message})"}
                except (ValueError, TypeError, KeyError) as exc:
                    reply = {"error": f"bad request: {exc}"}
                stream.write(json.dumps(reply).encode("utf-8") + b"\n")
                stream.flush()


if __name__ == "__main__":
    main()
