import type { FetchLike } from "@tenant-integration/internal";

/**
 * Test support: a fetch function that records every request it receives and answers from a
 * script. Injected through the `fetch` option; no global is patched.
 */
export interface Recorded {
  readonly method: string;
  readonly url: string;
  readonly headers: Headers;
  readonly body: string;
  readonly redirect: RequestRedirect;
}

export type Answer = Response | Error | ((request: Request) => Response | Promise<Response>);

export interface FakeFetch extends FetchLike {
  readonly calls: Recorded[];
}

/** Answers with the scripted answers in order; the last one repeats. */
export function fakeFetch(...answers: Answer[]): FakeFetch {
  const calls: Recorded[] = [];
  let i = 0;
  const fn = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = input instanceof Request && init === undefined ? input : new Request(input, init);
    const body = request.body === null ? "" : await request.text();
    calls.push({
      method: request.method,
      url: request.url,
      headers: new Headers(request.headers),
      body,
      redirect: request.redirect,
    });
    const answer = answers[Math.min(i++, answers.length - 1)];
    if (answer === undefined) throw new Error("fakeFetch: no answer scripted");
    if (answer instanceof Error) throw answer;
    if (typeof answer === "function") return answer(request);
    return answer.clone();
  };
  return Object.assign(fn, { calls });
}

/** A JSON response. */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
}

/** A redirect response. */
export function redirect(status: number, location: string): Response {
  return new Response(null, { status, headers: { location } });
}
