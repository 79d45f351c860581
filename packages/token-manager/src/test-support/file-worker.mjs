// A command-line process of the user's kind, for the multi-process tests of fileStorage: it imports
// the BUILT package (by its own name) and keeps its tokens with `fileStorage(file)` and nothing added.
// It serves the commands of @tenant-integration/test-support's worker (sign-in, call, with holds and
// pauses: see its worker.mjs), and these of the file storage's own:
//
//   argv: <tenant url> <token file> <client id> <redirect uri> [fileStorage options as JSON]
//   {"cmd":"write","key":k,"value":v}       storage.set(k, v)
//   {"cmd":"write-loop","size":n}           storage.set of n-character values, forever (to be killed)
//   {"cmd":"hold-lock","log":path,"ms":n}   takes the storage's lock, appends "in <pid>" to the log,
//                                           holds it n ms, appends "out <pid>", releases
import { appendFileSync } from "node:fs";
import { createTokenManager } from "@tenant-integration/token-manager";
import { fileStorage } from "@tenant-integration/token-manager/node";
import { runWorker, say } from "@tenant-integration/test-support/worker";

const [url, file, clientId, redirectUri, storageOptions] = process.argv.slice(2);
const options = storageOptions ? JSON.parse(storageOptions) : {};

runWorker({
  createTokenManager,
  url,
  clientId,
  redirectUri,
  storage: () => fileStorage(file, options),
  commands: {
    async write(command, storage) {
      await storage.set(command.key, command.value);
      return { written: command.key };
    },
    async "write-loop"(command, storage) {
      say({ looping: true });
      for (let i = 0; ; i++) await storage.set(`loop`, String(i).padEnd(command.size, "x"));
    },
    async "hold-lock"(command, storage) {
      await storage.lock("hold", async () => {
        appendFileSync(command.log, `in ${process.pid}\n`);
        await new Promise((r) => setTimeout(r, command.ms));
        appendFileSync(command.log, `out ${process.pid}\n`);
      });
      return { held: true };
    },
  },
});
