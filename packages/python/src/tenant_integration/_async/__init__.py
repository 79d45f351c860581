"""The token manager's I/O flows, written once, async: the source of ``../_sync/`` (``scripts/unasync.py``)."""
