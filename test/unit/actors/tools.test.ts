// Tools filtered by the profile's allow-list: an allowed tool runs with the profile's identity and workspace; any
// other is refused after the refusal was recorded; the built-in tools behave as documented.
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NoWorkspaceError } from "../../../src/actors/handlers/builtin-tools.ts";
import { builtinTools } from "../../../src/actors/handlers/builtins.ts";
import {
  profileTools,
  ToolNotAllowedError,
  ToolRegistry,
  UnknownToolError,
} from "../../../src/actors/handlers/tools.ts";
import { Workspace, WorkspaceEscapeError } from "../../../src/actors/handlers/workspace.ts";

const signal = new AbortController().signal;

test("an allowed tool runs as the profile's identity; others are refused and the refusal recorded first", async () => {
  const registry = new ToolRegistry().register({
    name: "whoami",
    description: "",
    parameters: {},
    run: async (args, ctx) => ({ identity: ctx.identity, args }),
  });
  const refused: string[] = [];
  const tools = profileTools(
    registry.register(builtinTools().get("clock")!),
    ["whoami", "missing"],
    { identity: "billing-bot", workspace: undefined, resources: [], signal },
    async (name) => {
      refused.push(name);
    },
  );
  expect(tools.list().map((tool) => tool.name)).toEqual(["whoami"]);
  expect(await tools.call("whoami", { a: 1 })).toEqual({ identity: "billing-bot", args: { a: 1 } });
  await expect(tools.call("clock")).rejects.toBeInstanceOf(ToolNotAllowedError);
  expect(refused).toEqual(["clock"]);
  await expect(tools.call("missing")).rejects.toBeInstanceOf(UnknownToolError);
});

test("a tool is not started after the run was aborted", async () => {
  const controller = new AbortController();
  const tools = profileTools(
    builtinTools(),
    ["clock"],
    { identity: "p", workspace: undefined, resources: [], signal: controller.signal },
    async () => {},
  );
  controller.abort(new Error("canceled"));
  await expect(tools.call("clock")).rejects.toThrow("canceled");
});

test("clock and read_file", async () => {
  const dir = mkdtempSync(join(tmpdir(), "a2a-tools-"));
  try {
    writeFileSync(join(dir, "outside.txt"), "no");
    const workspace = await Workspace.open(join(dir, "ws"));
    writeFileSync(join(workspace.root, "notes.txt"), "hello");
    const registry = builtinTools();
    const ctx = { identity: "p", workspace, resources: [], signal };
    const clock = (await registry.get("clock")?.run({}, ctx)) as { now: string };
    expect(Math.abs(Date.parse(clock.now) - Date.now())).toBeLessThan(1000);
    expect(await registry.get("read_file")?.run({ path: "notes.txt" }, ctx)).toEqual({
      path: "notes.txt",
      content: "hello",
    });
    await expect(registry.get("read_file")!.run({ path: "../outside.txt" }, ctx)).rejects.toBeInstanceOf(
      WorkspaceEscapeError,
    );
    await expect(
      registry.get("read_file")!.run({ path: "x" }, { ...ctx, workspace: undefined }),
    ).rejects.toBeInstanceOf(NoWorkspaceError);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
