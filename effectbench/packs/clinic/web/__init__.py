"""The clinic's web substrate: a server-rendered app and its pixel bot, in the kit's frame.

* :mod:`.layout`: where the clinic's controls sit in the kit's fixed 1024x640 frame;
* :mod:`.app`: the HTML pages, served by the record service over the same store;
* :mod:`.pixels`: the baselines' scripted attempt, by recorded coordinates and screen
  changes, never by the DOM.

The ``web`` front end itself is the kit's (:class:`effectbench.kit.frontends.WebFrontEnd`).
"""
