"""The storage's I/O flows on an ``AsyncConnectionPool``, written by hand: ``../_sync/`` is generated
from them by ``scripts/unasync.py`` for a ``ConnectionPool`` (see the package's CONTRIBUTING.md, "Sync
and async"). The public classes (``PostgresStorage``, ``PostgresLock``) run one or the other."""
