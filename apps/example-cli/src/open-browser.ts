/**
 * Opens a URL in the user's browser, best effort: `open` on macOS, `start` on Windows, `xdg-open`
 * elsewhere. It never fails: where no opener exists (a server, a container, SSH), the URL printed
 * beside it is the way in.
 */
import { spawn } from "node:child_process";

/** Resolves `true` if an opener was started, `false` if none could be. */
export function openBrowser(url: string, platform: NodeJS.Platform = process.platform): Promise<boolean> {
  const [command, args, options] =
    platform === "darwin"
      ? ["open", [url], {}]
      : platform === "win32"
        ? // `start` is a cmd built-in; its first quoted argument is the window title, and & must be escaped.
          ["cmd", ["/c", "start", '""', url.replace(/&/g, "^&")], { windowsVerbatimArguments: true }]
        : ["xdg-open", [url], {}];
  return new Promise((resolve) => {
    try {
      const child = spawn(command, args as string[], { stdio: "ignore", detached: true, ...options });
      child.once("error", () => resolve(false));
      child.once("spawn", () => {
        child.unref();
        resolve(true);
      });
    } catch {
      resolve(false);
    }
  });
}
