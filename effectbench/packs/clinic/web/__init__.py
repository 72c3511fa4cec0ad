"""The clinic's web substrate: a server-rendered app, its browser front end, pixel bots.

* :mod:`.layout`: the fixed 1024x640 layout the pages and the bots share;
* :mod:`.app`: the HTML pages, served by the record service over the same store;
* :mod:`.frontend`: the ``web`` front end (a fresh browser context per episode
  in the worker's shared Chromium, a pixel-only :class:`~effectbench.computer.ComputerEnv`);
* :mod:`.pixels`: the baselines' scripted attempt, by recorded coordinates and
  screen changes, never by the DOM.
"""
