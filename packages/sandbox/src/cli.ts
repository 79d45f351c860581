#!/usr/bin/env node
/**
 * The `tenant-sandbox` command: parses the arguments, starts the sandbox, prints its URL and its
 * clients, and stops on SIGINT or SIGTERM.
 *
 * @module
 */
import { readFile } from "node:fs/promises";
import { HELP, parseCommand, UsageError } from "./args.js";
import { ClientConfigError, type ClientRegistration } from "./clients.js";
import { parseConfig, type SandboxConfig } from "./config.js";
import { startSandbox, type StartOptions } from "./start.js";
import { StateFileError } from "./tenant-state-file.js";
import { idOf, type UserRecord } from "./users.js";

/** The port used when neither `--port` nor the config file names one. */
export const DEFAULT_PORT = 4020;

async function version(): Promise<string> {
  const text = await readFile(new URL("../package.json", import.meta.url), "utf8");
  return (JSON.parse(text) as { version: string }).version;
}

async function loadConfig(path: string): Promise<SandboxConfig> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new UsageError(
      `--config ${path}: cannot read the file (${(error as NodeJS.ErrnoException).code ?? "error"})`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--config ${path}: not valid JSON (${(error as Error).message})`);
  }
  try {
    return parseConfig(json);
  } catch (error) {
    if (error instanceof ClientConfigError) throw new UsageError(`--config ${path}: ${error.message}`);
    throw error;
  }
}

function describe(client: ClientRegistration): string {
  const scopes = client.scopes === undefined ? "any" : client.scopes.join(" ");
  const native =
    client.native === true
      ? "\n    native: loopback redirect URIs without a port accept any port (not known service behaviour)"
      : "";
  return `  ${client.id}\n    redirect URIs: ${client.redirectUris.join("  ")}\n    scopes: ${scopes}${native}`;
}

/** The users as the startup text names them: id and name of the first few, and how many in all. */
function describeUsers(users: readonly UserRecord[]): string {
  const named = users.slice(0, 3).map((user) => {
    const name = user["name"];
    return typeof name === "string" ? `${String(idOf(user))} ${name}` : String(idOf(user));
  });
  return named.join(", ") + (users.length > 3 ? `, … (${users.length} in all)` : "") + " (the first is the default)";
}

/**
 * Runs the command with `argv` (without `node` and the script) and returns the exit code for the
 * cases that end at once (help, version, errors); a started server keeps the process alive.
 *
 * @see RFC 8252 §7.3 (the sandbox listens on loopback by default)
 */
export async function main(argv: readonly string[]): Promise<number | undefined> {
  try {
    const command = parseCommand(argv);
    if (command.kind === "help") {
      process.stdout.write(HELP);
      return 0;
    }
    if (command.kind === "version") {
      process.stdout.write(`${await version()}\n`);
      return 0;
    }
    const config = command.configPath === undefined ? {} : await loadConfig(command.configPath);
    const clients = [...(config.clients ?? [])];
    for (const client of command.clients) {
      if (clients.some((existing) => existing.id === client.id)) {
        throw new UsageError(`--client: the id "${client.id}" is also in the config file`);
      }
      clients.push(client);
    }
    const stateFile = command.stateFile ?? config.stateFile;
    const users = command.users ?? config.users;
    const rotationGraceSeconds = command.rotationGraceSeconds ?? config.rotationGraceSeconds;
    const options: StartOptions = {
      port: command.port ?? config.port ?? DEFAULT_PORT,
      host: command.host ?? config.host ?? "127.0.0.1",
      clients,
      autoApprove: command.autoApprove ?? config.autoApprove ?? false,
      testClock: command.testClock ?? config.testClock ?? false,
      allowedHosts: [...(config.allowedHosts ?? []), ...(command.allowedHosts ?? [])],
      ...(stateFile === undefined ? {} : { stateFile }),
      ...(rotationGraceSeconds === undefined ? {} : { rotationGraceSeconds }),
      ...(command.faults === undefined ? {} : { faults: command.faults }),
      ...(users === undefined ? {} : { users }),
      ...(config.defaultScopes === undefined ? {} : { defaultScopes: config.defaultScopes }),
      onError: (error) =>
        process.stderr.write(
          error instanceof StateFileError
            ? `tenant-sandbox: ${error.message}\n`
            : `tenant-sandbox: internal error: ${String(error)}\n`,
        ),
      // Nothing else runs in this process, so the adapter may use its faster globals.
      fastGlobals: true,
    };
    let running;
    try {
      running = await startSandbox(options);
    } catch (error) {
      if (error instanceof StateFileError) {
        process.stderr.write(`tenant-sandbox: ${error.message}\n`);
        return 1;
      }
      process.stderr.write(
        `tenant-sandbox: cannot listen on ${options.host ?? ""}:${options.port ?? ""}: ${(error as Error).message}\n`,
      );
      return 1;
    }
    if (command.json) {
      process.stdout.write(
        `${JSON.stringify({ url: running.url, port: running.port, host: running.host, autoApprove: options.autoApprove, testClock: options.testClock, stateFile: stateFile ?? null, rotationGraceSeconds: rotationGraceSeconds ?? 0, clients })}\n`,
      );
    } else {
      process.stdout.write(`tenant-sandbox listening on ${running.url}\n`);
      process.stdout.write(
        clients.length === 0 ? "clients: none (add --client)\n" : `clients:\n${clients.map(describe).join("\n")}\n`,
      );
      process.stdout.write(`users: ${describeUsers(running.sandbox.users)}\n`);
      process.stdout.write(
        `auto-approve: ${options.autoApprove === true ? "on" : "off"}, test clock: ${options.testClock === true ? "on" : "off"}\n`,
      );
      process.stdout.write(
        `state: ${stateFile === undefined ? "in memory only" : `kept in ${stateFile}`}, rotation grace: ${rotationGraceSeconds ?? 0} s\n`,
      );
    }
    if (clients.length === 0)
      process.stderr.write("tenant-sandbox: no clients registered; every authorization request will be refused\n");
    const stop = (): void => {
      running.close().then(
        () => process.exit(0),
        (error: unknown) => {
          process.stderr.write(`tenant-sandbox: ${error instanceof Error ? error.message : String(error)}\n`);
          process.exit(1);
        },
      );
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    return undefined;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`tenant-sandbox: ${error.message}\nRun tenant-sandbox --help for the options.\n`);
      return 2;
    }
    throw error;
  }
}

const code = await main(process.argv.slice(2));
if (code !== undefined) process.exitCode = code;
