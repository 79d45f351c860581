// A throwaway PostgreSQL server for tests, the conformance suite and benchmarks: a fresh cluster
// (initdb) in a temporary directory, started on a free loopback port, stopped, killed, paused and
// restarted by its pids. Debian's PostgreSQL (`/usr/lib/postgresql/<version>/bin`) unless
// POSTGRES_BIN_DIR names another. initdb and postgres refuse to run as root, and CI runs as root: a
// root process runs them as the `postgres` user (which Debian's package creates), a directory of
// that user's, by the spawn's uid and gid (so the pid is the postmaster's own, not a wrapper's).
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** What every server of this module runs with, unless `settings` say otherwise. */
const DEFAULT_SETTINGS = {
  listen_addresses: "127.0.0.1",
  // A process killed with SIGKILL loses nothing the OS has (fsync only guards an OS crash), and
  // fsync on a busy 2-core machine costs seconds per test run.
  fsync: "off",
  shared_buffers: "16MB",
  max_connections: "200",
};

/** Servers started by this process and not closed, each with its synchronous kill: run when the process exits, so no test run leaves one behind. */
const running = new Map();
let exitHooked = false;

/**
 * The PostgreSQL to run: POSTGRES_BIN_DIR (a directory holding `initdb` and `postgres`), else the
 * newest `/usr/lib/postgresql/<version>/bin` (Debian's), else the directory of `postgres` on PATH;
 * `undefined` when none runs.
 */
export function findPostgres() {
  for (const bin of candidates()) {
    const probe = spawnSync(join(bin, "postgres"), ["--version"], { encoding: "utf8" });
    if (probe.status === 0 && existsSync(join(bin, "initdb"))) {
      return { bin, version: probe.stdout.trim().replace(/^postgres \(PostgreSQL\) /, "") };
    }
  }
  return undefined;
}

function candidates() {
  if (process.env.POSTGRES_BIN_DIR) return [process.env.POSTGRES_BIN_DIR];
  const found = [];
  const debian = "/usr/lib/postgresql";
  if (existsSync(debian)) {
    const versions = readdirSync(debian).filter((v) => /^\d+$/.test(v));
    versions.sort((a, b) => Number(b) - Number(a));
    found.push(...versions.map((v) => join(debian, v, "bin")));
  }
  const onPath = spawnSync("sh", ["-c", "command -v postgres"], { encoding: "utf8" }).stdout.trim();
  if (onPath) found.push(join(onPath, ".."));
  return found;
}

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The uid and gid to run PostgreSQL's programs as: the `postgres` user's when this process is root, else none (this user). */
function runAs() {
  if (process.getuid?.() !== 0) return {};
  try {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
    return { uid, gid };
  } catch {
    throw new Error(
      "PostgreSQL refuses to run as root, and there is no `postgres` user to run it as (Debian's postgresql package creates one)",
    );
  }
}

/** Runs one of PostgreSQL's programs to its end; rejects with its output when it fails. */
function runProgram(command, args, identity) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...identity, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    child.once("error", (e) => reject(new Error(`${command} could not be run: ${e.message}`)));
    child.once("exit", (code) =>
      code === 0 ? resolve(output) : reject(new Error(`${command} ${args.join(" ")} exited with ${code}:\n${output}`)),
    );
  });
}

/** The pids of the processes whose parent is `pid` (a postmaster's backends and workers), from /proc. */
function childrenOf(pid) {
  const children = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The fields after the command (in parentheses, which may hold spaces): state, ppid, …
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const [, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(ppid) === pid) children.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return children;
}

/** Whether `pid` still runs (a zombie, which holds nothing, counts as gone). */
function alive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

function signal(pids, name) {
  for (const pid of pids) {
    try {
      process.kill(pid, name);
    } catch {
      // Gone meanwhile.
    }
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Spawns `postgres` on `dataDir` and resolves with the child once it logs that it is ready to
 * accept connections (a standby: read-only connections); rejects, with its log, when it exits first
 * or is not ready within `timeoutMs` (it is then killed).
 */
async function spawnPostgres({ bin, dataDir, socketDir, port, settings, identity, timeoutMs }) {
  const args = ["-D", dataDir, "-p", String(port), "-k", socketDir];
  for (const [name, value] of Object.entries(settings)) args.push("-c", `${name}=${value}`);
  const child = spawn(join(bin, "postgres"), args, { ...identity, stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  let log = "";
  child.stdout.on("data", (d) => (log += d));
  child.stderr.on("data", (d) => (log += d));
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`postgres did not start within ${timeoutMs} ms:\n${log}`));
    }, timeoutMs);
    const ready = () => {
      if (!/database system is ready to accept (read-only )?connections/.test(log)) return;
      clearTimeout(timer);
      child.stdout.off("data", ready);
      child.stderr.off("data", ready);
      resolve();
    };
    child.stdout.on("data", ready);
    child.stderr.on("data", ready);
    child.once("error", (e) => {
      clearTimeout(timer);
      reject(new Error(`postgres could not be run: ${e.message}`));
    });
    child.once("exit", (code, signalName) => {
      clearTimeout(timer);
      reject(new Error(`postgres exited (${code ?? signalName}) before it was ready:\n${log}`));
    });
  });
  return { child, exited, log: () => log };
}

/**
 * A server on `dataDir` (already made by initdb or pg_basebackup) in `dir`, started on `port`,
 * with the steps a test or the conformance orchestrator takes on it (documented in index.d.ts).
 */
async function serve({ bin, dir, dataDir, port, settings, identity, timeoutMs, user, database }) {
  let server = await spawnPostgres({ bin, dataDir, socketDir: dir, port, settings, identity, timeoutMs });
  let earlier = "";
  /** The backends `hang` stopped: `resume` wakes exactly these. */
  let stopped = [];
  const up = () => server.child.exitCode === null && server.child.signalCode === null;
  /**
   * Kills the postmaster and every backend and worker at once (SIGKILL: no shutdown, no checkpoint).
   * The postmaster is stopped first, so that no backend is forked between the listing and the kill;
   * a backend left alive would keep the shared memory in use, and a new postmaster would refuse it.
   */
  const killNow = () => {
    const postmaster = up() ? [server.child.pid] : [];
    signal(postmaster, "SIGSTOP");
    const all = [...postmaster, ...postmaster.flatMap(childrenOf), ...stopped];
    signal(all, "SIGKILL");
    stopped = [];
    return all;
  };
  const gone = async (pids) => {
    while (pids.some(alive)) await sleep(20);
  };
  const handle = {
    host: "127.0.0.1",
    port,
    user,
    database,
    url: `postgres://${user}@127.0.0.1:${port}/${database}`,
    dir,
    dataDir,
    get pid() {
      return server.child.pid;
    },
    output: () => earlier + server.log(),
    async start() {
      if (up()) return;
      earlier += server.log();
      server = await spawnPostgres({ bin, dataDir, socketDir: dir, port, settings, identity, timeoutMs });
      running.set(handle, killNow);
    },
    async stop() {
      if (!up()) return;
      handle.resume();
      const pids = [server.child.pid, ...childrenOf(server.child.pid)];
      // A fast shutdown: open connections are ended, a checkpoint is written.
      signal(pids.slice(0, 1), "SIGINT");
      await server.exited;
      await gone(pids);
    },
    async kill() {
      const all = killNow();
      await server.exited;
      await gone(all);
    },
    async restart() {
      await handle.kill();
      await handle.start();
    },
    hang() {
      if (!up()) return;
      signal([server.child.pid], "SIGSTOP");
      // The postmaster is stopped first, so no backend is forked between the listing and the stop.
      stopped = childrenOf(server.child.pid);
      signal(stopped, "SIGSTOP");
    },
    resume() {
      signal([...stopped, ...(up() ? [server.child.pid] : [])], "SIGCONT");
      stopped = [];
    },
    async standby() {
      const standbyDir = newDirectory(identity);
      const standbyData = join(standbyDir, "data");
      const args = ["-D", standbyData, "-h", "127.0.0.1", "-p", String(port), "-U", user, "-R", "-X", "stream"];
      try {
        await runProgram(join(bin, "pg_basebackup"), args, identity);
        const standbyPort = await freePort();
        return await serve({
          bin,
          dir: standbyDir,
          dataDir: standbyData,
          port: standbyPort,
          settings,
          identity,
          timeoutMs,
          user,
          database,
        });
      } catch (e) {
        rmSync(standbyDir, { recursive: true, force: true });
        throw e;
      }
    },
    async close() {
      running.delete(handle);
      await handle.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  running.set(handle, killNow);
  hookExit();
  return handle;
}

/** A new temporary directory owned by the user PostgreSQL runs as. */
function newDirectory(identity) {
  const dir = mkdtempSync(join(tmpdir(), "tenant-postgres-"));
  if (identity.uid !== undefined) chownSync(dir, identity.uid, identity.gid);
  return dir;
}

/** Kills, when this process exits, every server it started and did not close. */
function hookExit() {
  if (exitHooked) return;
  exitHooked = true;
  process.once("exit", () => {
    for (const [handle, killNow] of running) {
      killNow();
      rmSync(handle.dir, { recursive: true, force: true });
    }
  });
}

/**
 * Makes a new cluster (`initdb`: trust authentication on loopback, `user` the superuser, UTF-8, the
 * C locale) in a new temporary directory and starts it on 127.0.0.1 at `port` (else a free one),
 * with `settings` (`-c name=value`) over the defaults; resolves once it accepts connections (about
 * 3 s, initdb's). Rejects with PostgreSQL's output when it cannot.
 */
export async function startPostgres({
  bin = findPostgres()?.bin,
  port,
  settings = {},
  timeoutMs = 30_000,
  user = "tenant",
  database = "postgres",
} = {}) {
  if (!bin) throw new Error("no PostgreSQL found: apt-get install -y postgresql, or set POSTGRES_BIN_DIR");
  const identity = runAs();
  const dir = newDirectory(identity);
  const dataDir = join(dir, "data");
  try {
    const args = ["-D", dataDir, "-A", "trust", "-U", user, "-E", "UTF8", "--locale=C", "--no-sync"];
    await runProgram(join(bin, "initdb"), args, identity);
    return await serve({
      bin,
      dir,
      dataDir,
      port: port ?? (await freePort()),
      settings: { ...DEFAULT_SETTINGS, ...settings },
      identity,
      timeoutMs,
      user,
      database,
    });
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}
