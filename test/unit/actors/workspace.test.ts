// The pinned workspace: paths resolve inside it; `..`, absolute paths and symbolic links cannot leave it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Workspace, WorkspaceEscapeError } from "../../../src/actors/handlers/workspace.ts";

let base: string;
let workspace: Workspace;
beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), "a2a-ws-"));
  writeFileSync(join(base, "secret.txt"), "outside");
  workspace = await Workspace.open(join(base, "ws"));
  mkdirSync(join(workspace.root, "docs"));
  writeFileSync(join(workspace.root, "docs", "a.txt"), "inside");
  symlinkSync(join(base, "secret.txt"), join(workspace.root, "link-out"));
  symlinkSync(base, join(workspace.root, "dir-out"));
  symlinkSync(join(workspace.root, "docs", "a.txt"), join(workspace.root, "link-in"));
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

test("reads, writes and lists inside the workspace", async () => {
  expect(await workspace.readText("docs/a.txt")).toBe("inside");
  expect(await workspace.readText("./docs/../docs/a.txt")).toBe("inside");
  expect(await workspace.readText("link-in")).toBe("inside");
  await workspace.writeText("new/b.txt", "written");
  expect(await workspace.readText("new/b.txt")).toBe("written");
  expect(await workspace.list()).toEqual(["dir-out", "docs/", "link-in", "link-out", "new/"]);
});

test.each([
  ["../secret.txt"],
  ["docs/../../secret.txt"],
  ["/etc/passwd"],
  ["link-out"],
  ["dir-out/secret.txt"],
  ["dir-out/new-file.txt"],
  ["nul\0byte"],
])("refuses %p", async (path) => {
  await expect(workspace.resolve(path)).rejects.toBeInstanceOf(WorkspaceEscapeError);
  await expect(workspace.readText(path)).rejects.toBeInstanceOf(WorkspaceEscapeError);
});

test("a write through a link to outside is refused and writes nothing", async () => {
  await expect(workspace.writeText("dir-out/planted.txt", "x")).rejects.toBeInstanceOf(WorkspaceEscapeError);
  expect(await Bun.file(join(base, "planted.txt")).exists()).toBe(false);
});
