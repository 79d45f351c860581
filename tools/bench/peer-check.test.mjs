// Every typical app the size rows compare works against the sandbox (peer-check.mjs): signs in,
// serves 5 concurrent calls after expiry with one refresh, revokes at sign-out. A peer whose app
// stops working (a library update, a change to the sandbox) fails here, not only in `pnpm bench`.
import assert from "node:assert/strict";
import { test } from "node:test";
import { TYPICAL_APPS, checkTypicalApps } from "./peer-check.mjs";

test("every typical app works against the sandbox before its bytes count", { timeout: 180_000 }, async () => {
  const verdicts = await checkTypicalApps(TYPICAL_APPS);
  assert.deepEqual(
    verdicts.map((v) => `${v.file}: ${v.ok ? "works" : v.reason}`),
    TYPICAL_APPS.map((file) => `${file}: works`),
  );
  assert.ok(verdicts.every((v) => v.refreshes === 1));
});
