"""The clinic as a native desktop app: the ``desktop`` and ``remote_display`` substrates.

* :mod:`.app`: the GTK 3 front end, its own process per episode, a client of the
  episode's record service (the fault lives there, so every front end meets it);
* :mod:`.layout`: its fixed layout (the recorded coordinates of pixel bots);
* :mod:`.frontend`: the two front ends (Xvfb with AT-SPI; Xvnc seen over RFB);
* :mod:`.a11y_driver` and :mod:`.pixel_driver`: the shipped baselines' scripted
  steps, through the accessibility tree (desktop) or by pixels (remote display);
* :mod:`.env`: the agent's envs with the product's REST readbacks attached.

The ladder, measured (dev split, 3 trials, 81 episodes per arm and substrate),
is the API level's on both substrates, row for row: ``screen_only`` SWER 51/81
(63%, every fault category), ``effect_verified`` 9/81 (11%: C4, C5, C7 writes
the encounters readback cannot see) with over-halt 6/81 (the undeclared
controls), ``effect_verified_all`` 0/81 with the same over-halt. The front end
changes how an arm reads the screen, not what the record service does.
"""
