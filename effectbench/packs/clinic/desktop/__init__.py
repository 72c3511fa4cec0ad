"""The clinic as a native desktop app: the ``desktop`` and ``remote_display`` substrates.

* :mod:`.app`: the GTK 3 front end, its own process per episode, a client of the
  episode's record service (the fault lives there, so every front end meets it);
* :mod:`.layout`: its fixed layout (the recorded coordinates of pixel bots);
* :mod:`.frontend`: the two front ends (Xvfb with AT-SPI; Xvnc seen over RFB);
* :mod:`.a11y_driver` and :mod:`.pixel_driver`: the shipped baselines' scripted
  steps, through the accessibility tree (desktop) or by pixels (remote display);
* :mod:`.env`: the agent's envs with the product's REST readbacks attached.

The ladder of arms on both substrates is in ``docs/clinic.md``.
"""
