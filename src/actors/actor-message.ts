// What an actor sends its supervisor on its pipe (see actor-pipe.ts), one JSON line each: a liveness ping with the
// actor's RSS, the news that it has loaded and starts working, or a metric snapshot. The supervisor's reader checks
// every line against the schema.
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
  Type.Object({
    kind: Type.Literal("metrics"),
    /** prom-client's getMetricsAsJSON() of the actor's registry. */
    metrics: Type.Array(Type.Unknown()),
  }),
]);
export type ActorMessage = Static<typeof ActorMessageSchema>;

const MESSAGE = TypeCompiler.Compile(ActorMessageSchema);

/** The supervisor's end: calls `onMessage` for each valid line, `onInvalid` for any other. */
export function readActorMessages(
  pipe: Readable,
  onMessage: (message: ActorMessage) => void,
  onInvalid: () => void,
): void {
  pipe.on("error", () => {});
  createInterface({ input: pipe }).on("line", (line) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      return onInvalid();
    }
    if (MESSAGE.Check(parsed)) onMessage(parsed);
    else onInvalid();
  });
}
