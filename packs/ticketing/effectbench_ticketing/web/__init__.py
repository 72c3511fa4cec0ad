"""The support desk's web substrate: a server-rendered app, its browser front end, pixel bots.

* :mod:`.layout`: the fixed 1024x640 layout the pages and the bots share;
* :mod:`.app`: the HTML pages, served by the service over the same store;
* :mod:`.screen`: the one module that reaches EffectBench's browser machinery;
* :mod:`.frontend`: the ``web`` front end (a fresh browser context per episode, a pixel-only
  computer env);
* :mod:`.pixels`: the baselines' scripted attempt, by recorded coordinates and screen
  changes, never by the DOM.
"""
