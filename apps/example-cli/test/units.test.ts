import { describe, expect, it } from "vitest";
import { parseCommand, UsageError } from "../src/args.js";
import { configDir, tokenFile } from "../src/paths.js";

describe("parseCommand", () => {
  it("reads login with its flags, splitting scopes on spaces", () => {
    expect(
      parseCommand([
        "login",
        "--tenant",
        "https://acme.tenant.example",
        "--client-id",
        "x",
        "--scopes",
        "profile:read  tickets:read",
        "--no-open",
        "--timeout",
        "60",
      ]),
    ).toEqual({
      kind: "login",
      tenant: "https://acme.tenant.example",
      clientId: "x",
      scopes: ["profile:read", "tickets:read"],
      open: false,
      timeoutSeconds: 60,
      json: false,
    });
  });

  it("reads --port for login only, as a port number", () => {
    expect(parseCommand(["login", "--port", "8123"])).toMatchObject({ port: 8123 });
    expect(parseCommand(["login"])).not.toHaveProperty("port");
    for (const bad of ["0", "65536", "80x", "1.5"])
      expect(() => parseCommand(["login", "--port", bad])).toThrow(/--port must be a port number/);
    expect(() => parseCommand(["whoami", "--port", "8123"])).toThrow(/--port is an option of login only/);
  });

  it("defaults to profile:read, opening the browser and a 300-second wait", () => {
    expect(parseCommand(["login"])).toMatchObject({ scopes: ["profile:read"], open: true, timeoutSeconds: 300 });
  });

  it("treats no command, help and --help as the help", () => {
    for (const argv of [[], ["help"], ["--help"], ["whoami", "-h"]])
      expect(parseCommand(argv)).toEqual({ kind: "help" });
  });

  it("refuses a zero timeout, empty scopes and a second positional argument", () => {
    expect(() => parseCommand(["login", "--timeout", "0"])).toThrow(UsageError);
    expect(() => parseCommand(["login", "--scopes", " "])).toThrow(/at least one scope/);
    expect(() => parseCommand(["whoami", "extra"])).toThrow(/unexpected argument "extra"/);
    expect(() => parseCommand(["logout", "--json"])).toThrow(/--json is an option of whoami only/);
  });
});

describe("where tokens are stored", () => {
  it("uses TENANT_CONFIG_DIR, then XDG_CONFIG_HOME, then ~/.config", () => {
    expect(configDir({ TENANT_CONFIG_DIR: "/tmp/t" }, "/home/ada")).toBe("/tmp/t");
    expect(configDir({ XDG_CONFIG_HOME: "/xdg" }, "/home/ada")).toBe("/xdg/tenant-integration");
    expect(configDir({}, "/home/ada")).toBe("/home/ada/.config/tenant-integration");
  });

  it("names the file after the tenant host and the client, with unsafe characters replaced", () => {
    expect(tokenFile("/d", "http://127.0.0.1:4020/", "cli")).toBe("/d/127.0.0.1_4020-cli.json");
    expect(tokenFile("/d", "https://acme.tenant.example", "my/app")).toBe("/d/acme.tenant.example-my_app.json");
  });
});
