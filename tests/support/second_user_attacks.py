"""A second local user's attacks on an episode, run by path as root, then as uid 65534.

It imports all it needs, drops to uid and gid 65534 (``nobody``, no
supplementary groups; a process that cannot says so on stderr and exits 3),
reads a JSON list of attacks on stdin and writes one JSON result per attack.
Standard library only: after the drop it may not read the harness's Python.
Every socket operation is bounded in time.
"""

from __future__ import annotations

import encodings.idna  # noqa: F401 - looked up lazily by socket.getaddrinfo, after the drop
import encodings.latin_1  # noqa: F401 - the same, for X's reply text
import errno
import http.client
import json
import os
import socket
import struct
import sys
from collections.abc import Callable
from typing import Any

NOBODY = 65534
TIMEOUT_S = 3.0


def _errno(exc: OSError) -> str:
    return errno.errorcode.get(exc.errno or 0, type(exc).__name__)


def http_request(port: int, method: str, path: str, headers: dict[str, str], body: str) -> Any:
    """One HTTP request to 127.0.0.1:``port``: the status it got, or the error."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT_S)
    try:
        conn.request(method, path, body=body.encode() if body else None, headers=headers)
        response = conn.getresponse()
        return {"status": response.status, "body": response.read(300).decode("utf-8", "replace")}
    except OSError as exc:
        return {"error": _errno(exc)}
    finally:
        conn.close()


def _recv(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def _x11_session(sock: socket.socket) -> dict[str, Any]:
    """Set up an X connection with no cookie; if admitted, list the root's windows, read a pixel."""
    sock.sendall(b"l\0" + struct.pack("<HHHHxx", 11, 0, 0, 0))
    head = _recv(sock, 8)
    status, extra = head[0], struct.unpack("<H", head[6:8])[0] * 4
    body = _recv(sock, extra)
    if status != 1:
        reason = body[: head[1]].decode("latin-1") if status == 0 else "authenticate"
        return {"admitted": False, "reason": reason.strip()}
    vendor_length, formats = struct.unpack("<H", body[16:18])[0], body[21]
    screen = 32 + (vendor_length + 3) // 4 * 4 + 8 * formats
    root = struct.unpack("<I", body[screen : screen + 4])[0]
    sock.sendall(struct.pack("<BxHI", 15, 2, root))  # QueryTree(root)
    reply = _recv(sock, 32)
    children = struct.unpack("<H", reply[16:18])[0] if reply[0] == 1 else -1
    _recv(sock, struct.unpack("<I", reply[4:8])[0] * 4)
    sock.sendall(struct.pack("<BBHIhhHHI", 73, 2, 5, root, 0, 0, 1, 1, 0xFFFFFFFF))  # GetImage
    pixel = _recv(sock, 32)[0] == 1
    return {"admitted": True, "windows": children, "pixel": pixel}


def x11(display: int) -> Any:
    """Connect to X display ``display`` (socket and abstract socket), presenting no cookie."""
    results = {}
    name = f"/tmp/.X11-unix/X{display}"
    for label, address in (("socket", name), ("abstract", "\0" + name)):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(TIMEOUT_S)
        try:
            sock.connect(address)
            results[label] = _x11_session(sock)
        except OSError as exc:
            results[label] = {"admitted": False, "reason": _errno(exc)}
        finally:
            sock.close()
    return results


def rfb(address: str | int, text: str) -> Any:
    """Open an RFB session (a Unix socket path, or a port on 127.0.0.1) and type ``text``."""
    family = socket.AF_INET if isinstance(address, int) else socket.AF_UNIX
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.settimeout(TIMEOUT_S)
    try:
        sock.connect(("127.0.0.1", address) if isinstance(address, int) else address)
        if not _recv(sock, 12).startswith(b"RFB "):
            return {"typed": False, "reason": "not an RFB server"}
        sock.sendall(b"RFB 003.008\n")
        offered = _recv(sock, _recv(sock, 1)[0])
        if 1 not in offered:
            return {"typed": False, "reason": f"no 'None' security offered: {list(offered)}"}
        sock.sendall(b"\x01")
        if _recv(sock, 4) != b"\0\0\0\0":
            return {"typed": False, "reason": "security handshake refused"}
        sock.sendall(b"\x01")  # ClientInit, shared
        _recv(sock, 20)
        _recv(sock, struct.unpack(">I", _recv(sock, 4))[0])
        for char in text:
            for down in (1, 0):
                sock.sendall(struct.pack(">BBxxI", 4, down, ord(char)))
        return {"typed": True}
    except OSError as exc:
        return {"typed": False, "reason": _errno(exc)}
    finally:
        sock.close()


def dbus(path: str) -> Any:
    """Connect to a D-Bus socket, authenticate as this uid and say Hello."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(TIMEOUT_S)
    try:
        sock.connect(path)
        sock.sendall(b"\0AUTH EXTERNAL " + str(os.getuid()).encode().hex().encode() + b"\r\n")
        if not sock.recv(200).startswith(b"OK"):
            return {"admitted": False, "reason": "authentication rejected"}
        fields = b""
        for code, value in ((1, b"/org/freedesktop/DBus"), (2, b"org.freedesktop.DBus")):
            fields += _dbus_field(fields, code, b"o" if code == 1 else b"s", value)
        fields += _dbus_field(fields, 3, b"s", b"Hello")
        fields += _dbus_field(fields, 6, b"s", b"org.freedesktop.DBus")
        header = b"l\x01\x00\x01" + struct.pack("<III", 0, 1, len(fields)) + fields
        sock.sendall(b"BEGIN\r\n" + header + b"\0" * (-len(header) % 8))
        reply = sock.recv(64)
        return {"admitted": bool(reply), "reason": "" if reply else "disconnected after BEGIN"}
    except OSError as exc:
        return {"admitted": False, "reason": _errno(exc)}
    finally:
        sock.close()


def _dbus_field(before: bytes, code: int, signature: bytes, value: bytes) -> bytes:
    pad = b"\0" * (-(16 + len(before)) % 8)
    return (
        pad + bytes([code, 1]) + signature + b"\0" + struct.pack("<I", len(value)) + value + b"\0"
    )


def read(path: str) -> Any:
    """Read a file (a cookie, a socket folder's listing)."""
    try:
        if os.path.isdir(path):
            return {"read": True, "entries": sorted(os.listdir(path))}
        with open(path, "rb") as handle:
            return {"read": True, "size": len(handle.read())}
    except OSError as exc:
        return {"read": False, "reason": _errno(exc)}


def find(needle: str) -> Any:
    """Look for ``needle`` in every process's command line and environment this user can read."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        for part in ("cmdline", "environ"):
            try:
                with open(f"/proc/{pid}/{part}", "rb") as handle:
                    if needle.encode() in handle.read():
                        found.append(f"{pid}/{part}")
            except OSError:
                continue
    return {"found": found}


ATTACKS: dict[str, Callable[..., Any]] = {
    "http": http_request,
    "x11": x11,
    "rfb": rfb,
    "dbus": dbus,
    "read": read,
    "find": find,
}


def main() -> None:
    """Become uid 65534, then run every attack read from stdin; print the results."""
    attacks = json.load(sys.stdin)
    try:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    except OSError as exc:
        sys.stderr.write(f"cannot become uid {NOBODY} (running as uid {os.getuid()}): {exc}\n")
        sys.exit(3)
    if (os.getuid(), os.geteuid(), os.getgid(), os.getegid()) != (NOBODY,) * 4:
        sys.stderr.write(f"still uid {os.geteuid()} gid {os.getegid()} after the switch\n")
        sys.exit(3)
    results = [ATTACKS[attack.pop("attack")](**attack) for attack in attacks]
    json.dump({"uid": os.getuid(), "results": results}, sys.stdout)


if __name__ == "__main__":
    main()
