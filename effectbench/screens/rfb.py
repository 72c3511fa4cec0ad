"""A minimal RFB (VNC) client, and the remote-display env built on it.

The remote-display agent holds one connection to the episode's ``Xvnc`` and
nothing else: no X display, no accessibility bus. Xvnc serves RFB on a Unix
socket in the session's private folder (mode 0600, one client at a time), so
reaching the socket is the authorization: no other local user can, and no TCP
port is open. The client speaks RFB 3.8 with security type None, asks for
32-bit true colour, and accepts Raw and CopyRect rectangles (plus the
DesktopSize pseudo-encoding). It is synchronous: a screenshot asks for a full
(non-incremental) update and returns once it arrived, so a baseline can poll
for screen changes without sleeping. Input events are sent at once; the one
stream keeps them in order with the next update request, so a screenshot never
predates an action sent before it.

:class:`RfbClient` keeps a local copy of the framebuffer. :class:`RemoteDisplayEnv` is the
:class:`~effectbench.computer.ComputerEnv` over it: pointer and key events
are RFB messages (keysyms as on X), screenshots are the synced framebuffer.
"""

from __future__ import annotations

import socket
import struct
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from effectbench.computer import Display
from effectbench.computer.base import Readbacks
from effectbench.errors import InfrastructureError
from effectbench.screens.xbase import XScreen

RAW, COPY_RECT, DESKTOP_SIZE = 0, 1, -223
PIXEL_FORMAT = struct.pack(">BBBBHHHBBBxxx", 32, 24, 0, 1, 255, 255, 255, 16, 8, 0)
"""32 bits per pixel, depth 24, little-endian, true colour: bytes B, G, R, pad."""


class RfbError(InfrastructureError):
    """The RFB server refused the client or broke the protocol (harness-side)."""


class RfbClient:
    """One RFB 3.8 connection to the Unix socket ``path``, with a local framebuffer.

    ``timeout`` bounds each read and write: 30 s, since on a loaded two-core CI machine the
    VNC server has been seen to stall past 10 s on a full-screen update.
    """

    def __init__(self, path: Path, timeout: float = 30.0) -> None:
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.settimeout(timeout)
        try:
            self._sock.connect(str(path))
        except OSError as exc:
            self._sock.close()
            raise RfbError(f"cannot reach the RFB server at {path} ({exc})") from exc
        self._buttons = 0
        self._pointer = (0, 0)
        try:
            self._handshake()
        except OSError as exc:
            self.close()
            raise RfbError(f"RFB handshake failed ({exc})") from exc

    # -- wire --------------------------------------------------------------------------

    def _recv(self, size: int) -> bytes:
        chunks = bytearray()
        while len(chunks) < size:
            try:
                chunk = self._sock.recv(size - len(chunks))
            except OSError as exc:
                raise RfbError(f"the RFB server went away ({exc})") from exc
            if not chunk:
                raise RfbError("the RFB server closed the connection")
            chunks += chunk
        return bytes(chunks)

    def _send(self, data: bytes) -> None:
        try:
            self._sock.sendall(data)
        except OSError as exc:
            raise RfbError(f"the RFB server went away ({exc})") from exc

    def _handshake(self) -> None:
        version = self._recv(12)
        if not version.startswith(b"RFB 003."):
            raise RfbError(f"not an RFB server ({version!r})")
        self._send(b"RFB 003.008\n")
        (count,) = struct.unpack(">B", self._recv(1))
        if count == 0:
            (length,) = struct.unpack(">I", self._recv(4))
            raise RfbError(f"RFB server refused: {self._recv(length).decode(errors='replace')}")
        types = self._recv(count)
        if 1 not in types:
            raise RfbError(f"RFB server offers no 'None' security (types {list(types)})")
        self._send(b"\x01")
        (result,) = struct.unpack(">I", self._recv(4))
        if result != 0:
            raise RfbError("RFB security handshake failed")
        self._send(b"\x01")  # ClientInit: shared
        width, height = struct.unpack(">HH", self._recv(4))
        self._recv(16)  # the server's pixel format; we set ours below
        (name_length,) = struct.unpack(">I", self._recv(4))
        self.name = self._recv(name_length).decode("utf-8", "replace")
        self.width, self.height = width, height
        self.frame = np.zeros((height, width, 4), dtype=np.uint8)
        self._send(b"\x00\x00\x00\x00" + PIXEL_FORMAT)
        encodings = (RAW, COPY_RECT, DESKTOP_SIZE)
        self._send(struct.pack(">BxH", 2, len(encodings)) + struct.pack(">3i", *encodings))
        self._request(incremental=False, region=(0, 0, width, height))
        while not self._read_update():
            pass

    def _request(self, incremental: bool, region: tuple[int, int, int, int]) -> None:
        self._send(struct.pack(">BBHHHH", 3, int(incremental), *region))

    def _read_update(self) -> bool:
        """Read server messages until one framebuffer update is applied.

        Return whether it covered pixel (0, 0): every update the server sends
        after reading our one-pixel full request does, which makes it a barrier.
        """
        while True:
            (kind,) = struct.unpack(">B", self._recv(1))
            if kind == 0:
                break
            if kind == 1:  # colour map entries: not used in true colour
                _, _, count = struct.unpack(">xHH", self._recv(5))
                self._recv(6 * count)
            elif kind == 2:  # bell
                continue
            elif kind == 3:  # server cut text
                (length,) = struct.unpack(">xxxI", self._recv(7))
                self._recv(length)
            else:
                raise RfbError(f"unknown RFB server message {kind}")
        (count,) = struct.unpack(">xH", self._recv(3))
        origin = False
        for _ in range(count):
            x, y, w, h, encoding = struct.unpack(">HHHHi", self._recv(12))
            origin = origin or (x == 0 and y == 0 and w > 0 and h > 0)
            if encoding == RAW:
                data = self._recv(w * h * 4)
                self.frame[y : y + h, x : x + w] = np.frombuffer(data, np.uint8).reshape(h, w, 4)
            elif encoding == COPY_RECT:
                sx, sy = struct.unpack(">HH", self._recv(4))
                self.frame[y : y + h, x : x + w] = self.frame[sy : sy + h, sx : sx + w].copy()
            elif encoding == DESKTOP_SIZE:
                self.width, self.height = w, h
                self.frame = np.zeros((h, w, 4), dtype=np.uint8)
            else:
                raise RfbError(f"RFB server sent an encoding not asked for ({encoding})")
        return origin

    # -- what the env uses ---------------------------------------------------------------

    def sync(self) -> None:
        """Bring the local framebuffer up to date: one full, non-incremental update.

        The server must answer a non-incremental request at once (an
        incremental one it may hold until something changes, and TigerVNC
        sometimes held it for good), and it handles our earlier input events
        before it, since both travel on the one connection in order.
        """
        self._request(incremental=False, region=(0, 0, self.width, self.height))
        while not self._read_update():
            pass

    def connected(self) -> bool:
        """Say whether the server still holds the connection (without reading from it)."""
        self._sock.setblocking(False)
        try:
            return bool(self._sock.recv(1, socket.MSG_PEEK))
        except (BlockingIOError, InterruptedError):
            return True
        except OSError:
            return False
        finally:
            self._sock.setblocking(True)

    def rgb(self) -> NDArray[np.uint8]:
        """Return the local framebuffer as height x width x 3 RGB."""
        return np.ascontiguousarray(self.frame[:, :, 2::-1])

    def pointer(self, x: int, y: int, buttons: int) -> None:
        """Send a pointer event: position and the mask of pressed buttons (bit 0 = left)."""
        self._send(struct.pack(">BBHH", 5, buttons, x, y))

    def key(self, keysym: int, down: bool) -> None:
        """Send a key event for ``keysym``."""
        self._send(struct.pack(">BBxxI", 4, int(down), keysym))

    def close(self) -> None:
        """Close the connection."""
        try:
            self._sock.close()
        except OSError:
            pass


class RemoteDisplayEnv(XScreen):
    """A ComputerEnv holding only an RFB connection: pixels in, pointer and keys out."""

    def __init__(self, path: Path, readbacks: Readbacks | None = None) -> None:
        self._client = RfbClient(path)
        super().__init__(Display(self._client.width, self._client.height), readbacks)
        self._mask = 0
        self._at = (0, 0)

    def close(self) -> None:
        """Close the RFB connection."""
        self._client.close()

    def connected(self) -> bool:
        """Say whether the RFB connection still stands."""
        return self._client.connected()

    def _pointer_to(self, x: int, y: int) -> None:
        self._at = (x, y)
        self._client.pointer(x, y, self._mask)

    def _button_event(self, number: int, down: bool) -> None:
        bit = 1 << (number - 1)
        self._mask = self._mask | bit if down else self._mask & ~bit
        self._client.pointer(*self._at, self._mask)

    def _keysym_event(self, keysym: int, down: bool) -> None:
        self._client.key(keysym, down)

    def _grab(self) -> NDArray[np.uint8]:
        self._client.sync()
        return self._client.rgb()
