// The "Map of the code" page: the table of CONTRIBUTING.md (which `pnpm lint` keeps equal to
// spec/concepts.yaml), shown as a section of its own after the contract's tags.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
// @ts-expect-error plain ESM script without types
import { codeMapPage, conceptTable, withCodeMap } from "../scripts/code-map.mjs";

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

describe("the Map of the code page", () => {
  it("shows the map's table: a row per concept, a column per kit", () => {
    const table: string = conceptTable(repoRoot);
    expect(table).toMatch(/^\| concept \| TypeScript \(`packages\/`\) \| Python .* \| Go \(`packages\/go\/`\) \|/);
    expect(table).toContain(
      "`token-manager/src/refresh-intent.ts` | `_refresh_intent.py` | `tokenmanager/refreshintent.go` |",
    );
    const page: string = codeMapPage(table);
    expect(page).toContain("| **Refresh intent** | `token-manager/src/refresh-intent.ts` | `_refresh_intent.py` |");
    expect(page).not.toContain("so that a paused holder's refresh is finished");
    expect(page.split("\n").filter((line) => line.startsWith("| **"))).toHaveLength(
      table.split("\n").filter((line) => line.startsWith("| **")).length,
    );
  });

  it("is a section of its own, after the contract's tags, which stay as they were", () => {
    const contract = { tags: [{ name: "OAuth", description: "x" }] };
    const read = withCodeMap(contract, repoRoot);
    expect(read.tags.map((tag: { name: string }) => tag.name)).toEqual(["OAuth", "Map of the code"]);
    expect(read.tags[1]).toMatchObject({ "x-traitTag": true });
    expect(contract.tags).toHaveLength(1);
  });
});
