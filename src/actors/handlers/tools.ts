// Tools a handler may call, filtered by the profile's allow-list and run as the profile's execution identity.
// A call outside the list is refused: the refusal is recorded in the task before ToolNotAllowedError is thrown.
import { attributes as A, inSpan, tracing } from "../../tracing/index.ts";
import type { Workspace } from "./workspace.ts";

/** What a tool runs with: never more than the profile grants. */
export interface ToolContext {
  readonly identity: string;
  readonly workspace: Workspace | undefined;
  readonly resources: readonly string[];
  readonly signal: AbortSignal;
}

export interface Tool {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the arguments object. */
  readonly parameters: Record<string, unknown>;
  run(args: Record<string, unknown>, ctx: ToolContext): Promise<unknown>;
}

export class ToolNotAllowedError extends Error {
  override readonly name = "ToolNotAllowedError";
  constructor(readonly tool: string) {
    super(`tool ${JSON.stringify(tool)} is not allowed for this profile`);
  }
}

export class UnknownToolError extends Error {
  override readonly name = "UnknownToolError";
  constructor(readonly tool: string) {
    super(`tool ${JSON.stringify(tool)} is allowed but not installed`);
  }
}

export class ToolRegistry {
  private readonly tools = new Map<string, Tool>();

  register(tool: Tool): this {
    this.tools.set(tool.name, tool);
    return this;
  }

  get(name: string): Tool | undefined {
    return this.tools.get(name);
  }

  names(): string[] {
    return [...this.tools.keys()].sort();
  }
}

/** The tools one run may use. */
export interface ProfileTools {
  /** The profile's allow-list as configured. */
  readonly allowed: readonly string[];
  /** The allowed tools that are installed, for offering them to a model. */
  list(): Tool[];
  /** Runs an allowed tool; throws ToolNotAllowedError (after recording the refusal) for any other name. */
  call(name: string, args?: Record<string, unknown>): Promise<unknown>;
}

export function profileTools(
  registry: ToolRegistry,
  allowed: readonly string[],
  ctx: ToolContext,
  recordRefusal: (tool: string) => Promise<void>,
): ProfileTools {
  const allow = new Set(allowed);
  return {
    allowed,
    list: () => allowed.flatMap((name) => registry.get(name) ?? []),
    async call(name, args = {}) {
      if (!allow.has(name)) {
        await recordRefusal(name);
        throw new ToolNotAllowedError(name);
      }
      const tool = registry.get(name);
      if (!tool) throw new UnknownToolError(name);
      ctx.signal.throwIfAborted();
      if (!tracing()) return await tool.run(args, ctx);
      const attributes = { [A.ATTR_GEN_AI_OPERATION_NAME]: "execute_tool", [A.ATTR_GEN_AI_TOOL_NAME]: name };
      return await inSpan(`execute_tool ${name}`, { attributes }, () => tool.run(args, ctx));
    },
  };
}
