"""An HTML report of what a suite's LLM calls said: conversations, outcomes, misses, drift, cost.

``pytest --promptvcr-html=report.html`` writes it for a run (see
:mod:`promptvcr.pytest_plugin.accounts.html`); ``promptvcr report CASSETTES... --html report.html``
for cassette files as they are. The pieces, each one job:

- :mod:`.model`: the values the report shows, plain data (sent by pytest-xdist workers);
- :mod:`.exchanges`: a request and its answer masked as a cassette is, as turns, with tokens;
- :mod:`.sessionturns`: realtime websocket sessions and MCP calls as turns;
- :mod:`.pricing`: prices from genai-prices, when installed;
- :mod:`.collect`: the entries, from a run's cassettes or from files;
- :mod:`.render`: the one self-contained HTML file, laid out by the Jinja2 templates in ``templates/``.
"""
