/**
 * The Host check against DNS rebinding: a web page on a name its attacker controls can make that
 * name resolve to 127.0.0.1, and its scripts then reach the sandbox as a same-origin server (the
 * test clock, the event log, the consent form). The browser still sends the attacker's name in
 * `Host`, so the sandbox answers only the names it is served as.
 *
 * @module
 */
/** A host name that cannot be used, in `allowedHosts`. */
export class HostConfigError extends Error {
  override readonly name = "HostConfigError";
  readonly code = "invalid_allowed_host";
}

const IPV4_LOOPBACK = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;
/** Addresses that mean "every interface" when listening; never a name a client uses. */
const WILDCARDS: ReadonlySet<string> = new Set(["0.0.0.0", "::", "[::]"]);

/**
 * Whether a host name (as in a URL, IPv6 in brackets) is a loopback name: `localhost` and the
 * names under `.localhost`, `127.0.0.0/8` and `[::1]`. No DNS answer can give an attacker these.
 *
 * @example isLoopbackHostname("127.0.0.1") // true
 * @see RFC 6761 §6.3 (localhost names resolve to loopback), RFC 8252 §8.3
 */
export function isLoopbackHostname(hostname: string): boolean {
  const name = hostname.toLowerCase();
  return name === "localhost" || name.endsWith(".localhost") || IPV4_LOOPBACK.test(name) || name === "[::1]";
}

/**
 * Normalizes a host name given in `allowedHosts` or `--host` to the form a request URL's
 * `hostname` has (lower case, IPv6 in brackets).
 *
 * @throws HostConfigError when it is empty or more than a host name (a port, a path, a scheme).
 * @example normalizeHostname("Tenant.Test") // "tenant.test"
 * @see RFC 9110 §7.2 (Host)
 */
export function normalizeHostname(host: string): string {
  const bracketed = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  let parsed: URL | undefined;
  try {
    parsed = new URL(`http://${bracketed}/`);
  } catch {
    parsed = undefined;
  }
  if (host === "" || parsed === undefined || parsed.port !== "" || parsed.hostname !== bracketed.toLowerCase()) {
    throw new HostConfigError(`"${host}" is not a host name (no scheme, port or path)`);
  }
  return parsed.hostname;
}

/**
 * The host names a server listening on `host` is reached by, beyond the loopback names: the host
 * itself, unless it is a wildcard address (`0.0.0.0`, `::`), which no client puts in a URL.
 *
 * @example hostsOfListenAddress("192.168.1.20") // ["192.168.1.20"]
 */
export function hostsOfListenAddress(host: string): string[] {
  return WILDCARDS.has(host) ? [] : [normalizeHostname(host)];
}

/**
 * The Host check: a function of a request URL that returns the `421 Misdirected Request` answer
 * when its host (from the `Host` header, on a server) is neither a loopback name nor one of
 * `allowedHosts`, and `undefined` otherwise. Synchronous: it runs on every request.
 *
 * @example const refuse = hostCheck(["tenant.test"]); refuse("http://evil.example/oauth/token") // a 421 Response
 * @see RFC 9110 §15.5.20 (421), https://en.wikipedia.org/wiki/DNS_rebinding
 */
export function hostCheck(allowedHosts: readonly string[]): (url: string) => Response | undefined {
  const allowed: ReadonlySet<string> = new Set(allowedHosts.map(normalizeHostname));
  return (url) => {
    let hostname: string;
    try {
      hostname = new URL(url).hostname.toLowerCase();
    } catch {
      hostname = "";
    }
    if (isLoopbackHostname(hostname) || allowed.has(hostname)) return undefined;
    return Response.json(
      {
        error: "misdirected_request",
        error_description:
          "This sandbox does not answer for that host name. Use a loopback name, or add the name to allowedHosts (--allowed-host).",
      },
      { status: 421, headers: { "Cache-Control": "no-store" } },
    );
  };
}
