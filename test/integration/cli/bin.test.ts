// The installed command: npm links bin/a2a-runtime into node_modules/.bin, so it must find its package through a link.
import { expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { symlinkSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../../support/temp-dir.ts";

test("bin/a2a-runtime runs the CLI when called through a symbolic link, as npx and npm scripts call it", () => {
  const link = join(tempDir("a2a-bin-"), "a2a-runtime");
  symlinkSync(join(import.meta.dir, "../../../bin/a2a-runtime"), link);
  const run = spawnSync(link, ["--help"], { encoding: "utf8", env: { ...process.env, PATH: process.env.PATH ?? "" } });
  expect(run.status).toBe(0);
  expect(run.stdout).toContain("Usage: a2a-runtime");
  expect(run.stdout).toContain("start");
});
