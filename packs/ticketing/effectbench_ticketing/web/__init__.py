"""The support desk's web substrate: a server-rendered app and its pixel bot, in the kit's frame.

* :mod:`.layout`: where the desk's controls sit in EffectBench's fixed 1024x640 page frame;
* :mod:`.app`: the HTML pages, served by the service over the same store;
* :mod:`.pixels`: the baselines' scripted attempt, by recorded coordinates and screen
  changes, never by the DOM.

The ``web`` front end itself is EffectBench's (:class:`effectbench.api.WebFrontEnd`).
"""
