"""The kit's desktop front end: a pack's declared screens as a GTK 3 application.

* :mod:`.render`: the application, built from the pack's :class:`~effectbench.kit.forms.
  Screens` alone (its own process per episode, a client of the episode's record service);
  the setup every kit-run GTK app shares (settings, the ``ready`` signal, the service
  connection);
* :mod:`.frontend`: the ``desktop`` (Xvfb, AT-SPI) and ``remote_display`` (Xvnc, RFB) front
  ends that run it;
* :mod:`.a11y`: the accessibility driver the scripted arms use on the desktop, by the
  declaration's accessible names (the pixel bot of the web frame, :mod:`effectbench.kit.
  pixels`, drives the remote display: the app paints the same frame at the same boxes).

Nothing here imports GTK but :mod:`.render`, which runs in the app's own process.
"""
