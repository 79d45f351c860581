// The driver for runtimes that may read a redirect's Location (Node, Bun, Deno, edge): it plays
// the browser with fetch and uses the sandbox's test routes.
export function httpDriver(sandboxUrl) {
  return {
    async authorize(url) {
      const response = await fetch(url, { redirect: "manual" });
      const location = response.headers.get("location");
      if (response.status !== 302 || !location)
        throw new Error(`authorize answered ${response.status} without a redirect`);
      return location;
    },
    async advanceClock(seconds) {
      const response = await fetch(`${sandboxUrl}/__sandbox/clock`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ advanceSeconds: seconds }),
      });
      if (!response.ok) throw new Error(`clock answered ${response.status}`);
    },
    async refreshCount() {
      const response = await fetch(`${sandboxUrl}/__sandbox/events`);
      const body = await response.json();
      const events = Array.isArray(body) ? body : body.events;
      return events.filter((e) => e.grantType === "refresh_token" && e.status === 200).length;
    },
  };
}
