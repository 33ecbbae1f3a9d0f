// What an actor sends its supervisor on its pipe (see actor-pipe.ts), one JSON line each: a liveness ping with the
// actor's RSS, the news that it has loaded and starts working, whether a handler is running in it, or a metric
// snapshot. The supervisor's reader checks every line against the schema.
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { type Static, Type } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";

export const ActorMessageSchema = Type.Union([
  Type.Object({
    kind: Type.Literal("alive"),
    /** The actor's resident set size as it sees it (process.memoryUsage.rss()), in bytes. */
    rssBytes: Type.Integer({ minimum: 0 }),
  }),
  /** Its code and handler modules are loaded: from now on worker.stallSeconds of silence mean a stuck loop. */
  Type.Object({ kind: Type.Literal("ready") }),
  /**
   * A handler started while the actor was idle ("busy", written before the handler's first line runs), or no handler
   * has run for IDLE_AFTER_MS ("idle"): an actor that dies busy died of a run.
   */
  Type.Object({ kind: Type.Literal("busy") }),
  Type.Object({ kind: Type.Literal("idle") }),
  Type.Object({
    kind: Type.Literal("metrics"),
    /** prom-client's getMetricsAsJSON() of the actor's registry. */
    metrics: Type.Array(Type.Unknown()),
  }),
]);
export type ActorMessage = Static<typeof ActorMessageSchema>;

const MESSAGE = TypeCompiler.Compile(ActorMessageSchema);

/**
 * The supervisor's end: calls `onMessage` for each valid line, `onInvalid` for any other. Resolves once the pipe has
 * ended and every line it held was handled.
 */
export function readActorMessages(
  pipe: Readable,
  onMessage: (message: ActorMessage) => void,
  onInvalid: () => void,
): Promise<void> {
  const lines = createInterface({ input: pipe });
  const ended = new Promise<void>((resolve) => {
    lines.on("close", resolve);
    pipe.on("error", resolve);
  });
  lines.on("line", (line) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      return onInvalid();
    }
    if (MESSAGE.Check(parsed)) onMessage(parsed);
    else onInvalid();
  });
  return ended;
}
