"""The only layer that knows about widgets and charts (the model layers never import it).

- :mod:`.charts`: tidy DataFrame in, Vega-Lite figure out, one module per topic;
- :mod:`.dashboard`: the dashboard pattern (controls → pure view function → chart, errors inline)
  and :func:`~.dashboard.show`;
- :mod:`.dashboards`: the notebooks' dashboards, one module per notebook (``nb00_…`` to ``nb09_…``);
- :mod:`.exercises`: questions and checked answers, computed by the model layers;
- :mod:`.notebook`: set-up for a notebook session (renderer, tables, takeaways).
"""
