"""The storage's I/O flows on a ``ConnectionPool``: generated from ``../_async/`` by
``scripts/unasync.py``; never edit these files."""
