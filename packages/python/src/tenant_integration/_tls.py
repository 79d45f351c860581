"""The TLS context of the kit's own httpx clients: one per process, its trust anchors loaded at the
first TLS handshake (issue 41, point 4).

httpx makes an SSL context for every client it creates, and loads the CA bundle into it (certifi's,
some 150 certificates: about 20 ms and 1.6 MiB), whether or not the client ever speaks TLS. The token
manager and the client each made one: creating both cost 1.3 times an ``httpx.Client``, a hundred
managers of a server's users cost 160 MiB, and a tool talking to the loopback sandbox over http
loaded the bundle twice for nothing. The kit's own httpx clients (those of :class:`TokenManager`,
:class:`AsyncTokenManager`, :class:`Client` and :class:`AsyncClient`, not an ``http_client`` of
yours) are given :func:`shared_context` instead: made once, and trusting what httpx's default
context trusts (``httpx.create_ssl_context()``: the file ``SSL_CERT_FILE`` or the directory
``SSL_CERT_DIR`` names, else certifi's bundle), loaded only when a connection first needs it.
"""

from __future__ import annotations

import os
import ssl
import sys
import threading
from typing import Any

__all__ = ["shared_context"]

_made = threading.Lock()
_context: ssl.SSLContext | None = None


class _TrustOnFirstHandshake(ssl.SSLContext):
    """``ssl.create_default_context()``'s client settings (certificates and host names verified), whose
    trust anchors are loaded right before the first TLS connection is wrapped: by ``wrap_socket``
    (httpcore's sync streams) or ``wrap_bio`` (TLS inside a proxy's tunnel, anyio and trio, which call
    it on a worker thread for a context of its own class, so the load never blocks an event loop)."""

    _trusted = False
    _loading = threading.Lock()

    def _trust(self) -> None:
        with self._loading:
            if self._trusted:
                return
            cafile, capath = os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")
            if cafile:
                self.load_verify_locations(cafile=cafile)
            elif capath:
                self.load_verify_locations(capath=capath)
            else:
                import certifi  # httpx's own dependency

                self.load_verify_locations(cafile=certifi.where())
            self._trusted = True

    def wrap_socket(self, *args: Any, **kwargs: Any) -> ssl.SSLSocket:
        self._trust()
        return super().wrap_socket(*args, **kwargs)

    def wrap_bio(self, *args: Any, **kwargs: Any) -> ssl.SSLObject:
        self._trust()
        return super().wrap_bio(*args, **kwargs)


def shared_context() -> ssl.SSLContext:
    """The process's one SSL context for the kit's own httpx clients, made on the first call (well under
    a millisecond: no certificate is read until a TLS connection is made). RFC 9110 §4.3.4 (https).

    Example:
        >>> shared_context() is shared_context()
        True
    """
    global _context
    with _made:
        if _context is None:
            context = _TrustOnFirstHandshake(ssl.PROTOCOL_TLS_CLIENT)  # verifies certificates and host names
            keylog = os.environ.get("SSLKEYLOGFILE")
            if keylog and not sys.flags.ignore_environment:
                context.keylog_filename = keylog  # as ssl.create_default_context() does
            _context = context
        return _context
