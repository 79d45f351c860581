"""Generated from ``../_async/`` by ``scripts/unasync.py``: do not edit; edit the async source and run it."""
