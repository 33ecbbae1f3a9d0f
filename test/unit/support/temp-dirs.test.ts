// The test run removes the temporary directories its tests make (test/support/temp-dir.ts, preloaded by bunfig.toml):
// a `bun test` of two fixture files that make one each (the second holding a link out of it) leaves the temporary
// folder as it found it and the link's target untouched. Without the preload the second file's directory stays: the
// helper's hook would belong to the first file that imported it.
import { expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "../../..");

test("a test run leaves no temporary directory of its tests behind, and never follows a link out of one", () => {
  const scratch = mkdtempSync(join(tmpdir(), "a2a-temp-dirs-"));
  try {
    const tmp = join(scratch, "tmp");
    const target = join(scratch, "target");
    mkdirSync(tmp);
    mkdirSync(target);
    writeFileSync(join(target, "kept"), "x");
    const run = spawnSync(
      process.execPath,
      [
        "test",
        "./test/support/fixtures/temp-dirs-a.fixture.test.ts",
        "./test/support/fixtures/temp-dirs-b.fixture.test.ts",
      ],
      {
        cwd: ROOT,
        env: { ...process.env, TMPDIR: tmp, LINK_TARGET: target },
        encoding: "utf8",
        timeout: 60_000,
      },
    );
    expect(run.stderr).toContain("2 pass");
    expect(readdirSync(tmp)).toEqual([]);
    expect(existsSync(join(target, "kept"))).toBe(true);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
});
