// Child processes for the multi-process tests: each speaks one JSON object per line on stdout and
// reads one command per line on stdin, so that a test can start many, wait until each says it is
// ready, release them all at once, and kill them.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

/** Runs `node args…` as a child that prints one JSON object per line. */
export function startJsonLines(args) {
  const proc = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "pipe"] });
  const queue = [];
  const waiting = [];
  let stderr = "";
  proc.stderr.on("data", (d) => (stderr += d.toString()));
  createInterface({ input: proc.stdout }).on("line", (line) => {
    const message = JSON.parse(line);
    const waiter = waiting.shift();
    if (waiter) waiter(message);
    else queue.push(message);
  });
  const exited = new Promise((resolve) =>
    proc.once("exit", () => {
      for (const waiter of waiting.splice(0)) waiter(new Error(`process exited: ${stderr}`));
      resolve();
    }),
  );
  return {
    process: proc,
    next: () => {
      const message = queue.shift();
      if (message) return Promise.resolve(message);
      if (proc.exitCode !== null || proc.signalCode !== null)
        return Promise.reject(new Error(`process exited: ${stderr}`));
      return new Promise((resolve, reject) => waiting.push((m) => (m instanceof Error ? reject(m) : resolve(m))));
    },
    send: (command) => proc.stdin.write(`${JSON.stringify(command)}\n`),
    exited,
  };
}

/** Runs `node args…` as a worker and resolves once it printed `{"ready":true,…}`. */
export async function startReady(args) {
  const worker = startJsonLines(args);
  const ready = await worker.next();
  if (!ready.ready) throw new Error(`worker not ready: ${JSON.stringify(ready)}`);
  return worker;
}

/** Sends `command` to every worker at once (each is ready and waiting on stdin) and collects their answers. */
export async function together(workers, command) {
  const answers = workers.map((w) => w.next());
  for (const w of workers) w.send(command);
  return Promise.all(answers);
}

/** Kills the processes (SIGKILL, after SIGCONT for a stopped one) and waits until they are gone. */
export async function stopAll(children) {
  for (const c of children) {
    c.process.kill("SIGCONT");
    c.process.kill("SIGKILL");
  }
  await Promise.all(children.map((c) => c.exited));
}
