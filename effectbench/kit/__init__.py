"""The pack kit: what every pack with a real system of record needs, written once.

A pack whose record is a database behind an HTTP service (the clinic on SQLite, the ticketing
pack on PostgreSQL, an author's next one) is built from these modules and keeps only its
domain (the schema and seed, the tasks, the faults at its save path, its routes and pages):

* :mod:`.provider`: :class:`~.provider.RecordPack`, the provider with every capability a
  kit-built pack offers, and the :class:`~.provider.TaskDefinition` it takes (written out,
  or drawn from templates by a generator);
* :mod:`.tables`: the oracle, a contract and every table's change set judged by one rule
  (:func:`~.tables.judge_tables`, on :mod:`effectbench.changes`);
* :mod:`.http`: the agent's actions over HTTP and the product's own readback;
* :mod:`.frontends`: the registry of a pack's front ends, and the ``api`` and ``web`` ones;
* :mod:`.pages` and :mod:`.pixels`: web pages in one fixed frame, and the pixel bot;
* :mod:`.forms`: a pack's screens declared once (fields, options, buttons, the requests
  its forms send, what its views load and list), which its web pages and the desktop share;
* :mod:`.desktop`: that declaration rendered as a GTK 3 app, its ``desktop`` (Xvfb, AT-SPI)
  and ``remote_display`` (Xvnc, RFB) front ends, and the accessibility driver;
* :mod:`.faults`: a pack's fault catalogue and the save path's standard replies;
* :mod:`.generate`: task definitions drawn from templates and a seed (distinct, stable from
  the template and the seed; a sequestered split from a secret seed only);
* :mod:`.draws`: the generic pieces a template's draw is composed of (fresh names and numbers,
  dates, a task's scene with its instance's mark, the template grid and the dev counts);
* :mod:`.catalogue`: a pack's generated catalogue (its dev and sequestered splits) and what a
  provider serving one adds (the absent split's reason, world digests, the manifest's
  commitment to the sequestered split), derived from one declaration (``CatalogueVariant``);
* :mod:`.audit`: the live adversarial audit of the oracle, its red team and attestation;
* :mod:`.sqlite`: an SQLite record (template, episode copies, read-only read, attacker), and
  a world file per generated task (:class:`~.sqlite.SqliteWorlds`).

The routes and pages a pack serves are declared on
:class:`~effectbench.episode_http.RecordService`. Packs import all of it from
:mod:`effectbench.api`.
"""
