// The built-in tools: `clock` (the current time) and `read_file` (a UTF-8 file inside the run's workspace).
import type { Tool } from "./tools.ts";

export const clockTool: Tool = {
  name: "clock",
  description: "The current date and time (UTC, ISO 8601).",
  parameters: { type: "object", properties: {}, additionalProperties: false },
  async run() {
    return { now: new Date().toISOString() };
  },
};

export class NoWorkspaceError extends Error {
  override readonly name = "NoWorkspaceError";
  constructor() {
    super("this profile has no workspace");
  }
}

export const readFileTool: Tool = {
  name: "read_file",
  description: "Reads a UTF-8 text file from the workspace (at most 64 KiB). Paths are relative to the workspace.",
  parameters: {
    type: "object",
    properties: { path: { type: "string", description: "File path relative to the workspace." } },
    required: ["path"],
    additionalProperties: false,
  },
  async run(args, ctx) {
    if (!ctx.workspace) throw new NoWorkspaceError();
    const path = typeof args.path === "string" ? args.path : "";
    return { path, content: await ctx.workspace.readText(path) };
  },
};
