"""The token manager's and the client's I/O, written once, async: the source of ``../_sync/`` (unasync.py)."""
