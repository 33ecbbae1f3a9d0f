// Temporary directories a test makes (configs, packed installs, working directories), removed once every test file
// has run: bunfig.toml preloads this file, so its `afterAll` is the test run's own, and a run leaves nothing behind in
// the system's temporary folder (a test that needs a directory to outlive its file has none to ask for).
import { afterAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const made: string[] = [];

afterAll(() => {
  // (rmSync removes a symbolic link, never what it points to: a packed install links this checkout's packages)
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A new directory under the system's temporary folder, named `<prefix><random>`, removed after the test run. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
