import { describe, expect, it } from "vitest";
import { isLogLevel, lineWriter, type LogLines, type Logger } from "./logger.js";

type Event = "detail" | "request" | "retry" | "failed";
const LINES: LogLines<Event, { n: number }> = {
  detail: ["debug", ({ n }) => [{ n }, `detail ${n}`]],
  request: ["info", ({ n }) => [{ n }, `request ${n}`]],
  retry: ["warn", ({ n }) => [{ n }, `retry ${n}`]],
  failed: ["error", ({ n }) => [{ n }, `failed ${n}`]],
};

/** A pino-shaped logger that records its lines; its methods need their `this`, as pino's do. */
function recording() {
  type Recorder = { lines: string[] };
  const method = (level: string) =>
    function (this: Recorder, fields: Record<string, unknown>, message: string): void {
      this.lines.push(`${level} ${JSON.stringify(fields)} ${message}`);
    };
  return {
    lines: [] as string[],
    debug: method("debug"),
    info: method("info"),
    warn: method("warn"),
    error: method("error"),
  };
}

const everyEvent = (write: (event: Event, input: { n: number }) => void): void => {
  for (const event of Object.keys(LINES) as Event[]) write(event, { n: 1 });
};

describe("lineWriter (the logger factories of both kits)", () => {
  it("writes the lines at or above the level, fields first, calling the logger's methods on it", () => {
    const logger = recording();
    everyEvent(lineWriter(logger, "warn", LINES));
    expect(logger.lines).toEqual(['warn {"n":1} retry 1', 'error {"n":1} failed 1']);
  });

  it("writes every line at debug and none when silent; info by the kits' default", () => {
    const all = recording();
    everyEvent(lineWriter(all, "debug", LINES));
    expect(all.lines).toHaveLength(4);
    const none = recording();
    everyEvent(lineWriter(none, "silent", LINES));
    expect(none.lines).toEqual([]);
  });

  it("does not make a line below the level", () => {
    let made = 0;
    const write = lineWriter(recording(), "info", { detail: ["debug", () => (made++, [{}, "detail"])] });
    write("detail", undefined);
    expect(made).toBe(0);
  });

  it("skips a level the logger lacks, and goes on when the logger throws", () => {
    const warnOnly: Logger = { warn: () => undefined };
    expect(() => everyEvent(lineWriter(warnOnly, "debug", LINES))).not.toThrow();
    const throwing: Logger = {
      info() {
        throw new Error("disk full");
      },
    };
    expect(() => lineWriter(throwing, "info", LINES)("request", { n: 1 })).not.toThrow();
  });

  it("knows the five levels and nothing else", () => {
    expect(["debug", "info", "warn", "error", "silent"].every(isLogLevel)).toBe(true);
    expect(["verbose", "INFO", "", undefined, 3].some(isLogLevel)).toBe(false);
  });

  it("accepts console as a Logger (types)", () => {
    const logger: Logger = console;
    expect(typeof logger.info).toBe("function");
  });
});
