/**
 * Internal: the `b64token` syntax of RFC 6750 §2.1. A token outside it could not be sent (and would
 * let a strategy inject header lines), so the middleware refuses it without echoing it.
 */
export const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
