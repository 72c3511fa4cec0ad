"""Per-episode screen infrastructure: the things an agent's screen runs on.

* :mod:`.xsession`: an X session per episode (``Xvfb`` or ``Xvnc``, its own
  D-Bus session and accessibility bus, a private runtime directory) under a
  reaping supervisor (:mod:`.processes`, :mod:`._supervisor`);
* :mod:`.xdisplay`: the desktop env (XTest input, screenshots, the AT-SPI tree
  through a per-episode reader process, :mod:`._a11y_helper`);
* :mod:`.rfb`: a minimal RFB client and the remote-display env over it;
* :mod:`.browser`: one shared headless Chromium per worker thread, a fresh
  context per episode, and the pixel-only browser env.
"""
