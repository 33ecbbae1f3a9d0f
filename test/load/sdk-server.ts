// The peer: @a2a-js/sdk's own server as its README sets it up (DefaultRequestHandler + a task store, served by the
// JSON-RPC express handler), run as a child process on Bun or (bundled) on Node. Usage: sdk-server <port> <mode> [store];
// mode "immediate" completes each task at once, "echo" answers like our echo handler; store is "memory" (the default:
// InMemoryTaskStore) or a database URL for the SDK's DatabaseTaskStore (sdk-store.ts). GET /__memory reports the heap.
import { type AgentCard, TaskState } from "@a2a-js/sdk";
import {
  AgentEvent,
  type AgentExecutor,
  DefaultRequestHandler,
  type ExecutionEventBus,
  type RequestContext,
} from "@a2a-js/sdk/server";
import { jsonRpcHandler, UserBuilder } from "@a2a-js/sdk/server/express";
// @ts-expect-error express 5 ships no type declarations and @types/express is not a dependency
import express from "express";
import { taskStoreFor } from "./sdk-store.ts";

const port = Number(process.argv[2] ?? "0");
const mode = process.argv[3] === "echo" ? "echo" : "immediate";
const store = process.argv[4] ?? "memory";
let counter = 0;

function textOf(context: RequestContext): string {
  const part = context.userMessage.parts.find((candidate) => candidate.content?.$case === "text");
  return part?.content?.$case === "text" ? part.content.value : "";
}

/** Completes at once: the task (SUBMITTED), then, like our echo handler, WORKING, the echoed artifact, COMPLETED. */
class BenchExecutor implements AgentExecutor {
  cancelTask = async (_taskId: string, _bus: ExecutionEventBus): Promise<void> => {};

  async execute(context: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId } = context;
    const now = () => new Date().toISOString();
    const status = (state: TaskState) => ({ state, timestamp: now(), message: undefined });
    bus.publish(
      AgentEvent.task({
        id: taskId,
        contextId,
        status: status(TaskState.TASK_STATE_SUBMITTED),
        artifacts: [],
        history: [context.userMessage],
        metadata: undefined,
      }),
    );
    if (mode === "echo") {
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: status(TaskState.TASK_STATE_WORKING),
          metadata: undefined,
        }),
      );
      counter += 1;
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: {
            artifactId: `response-${counter}`,
            name: "",
            description: "",
            parts: [
              { content: { $case: "text", value: textOf(context) }, metadata: undefined, filename: "", mediaType: "" },
            ],
            metadata: undefined,
            extensions: [],
          },
          append: false,
          lastChunk: true,
          metadata: undefined,
        }),
      );
    }
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: status(TaskState.TASK_STATE_COMPLETED),
        metadata: undefined,
      }),
    );
    bus.finished();
  }
}

const card: AgentCard = {
  name: "bench",
  description: "The @a2a-js/sdk peer of the benchmarks.",
  supportedInterfaces: [
    { url: `http://127.0.0.1:${port}/`, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" },
  ],
  provider: undefined,
  version: "1.0.0",
  capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [],
  signatures: [],
};

/** The part of an express 5 app this server uses. */
interface ExpressApp {
  get(path: string, handler: (request: unknown, response: { json(body: unknown): void }) => void): void;
  use(path: string, handler: unknown): void;
  listen(port: number, host: string, ready: () => void): void;
}

const handler = new DefaultRequestHandler(card, await taskStoreFor(store), new BenchExecutor());
const app = (express as () => ExpressApp)();
app.get("/__memory", (_request, response) => {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (typeof Bun !== "undefined") Bun.gc(true);
  else collect?.();
  const usage = process.memoryUsage();
  response.json({ heapUsed: usage.heapUsed, rss: usage.rss });
});
app.use("/", jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
app.listen(port, "127.0.0.1", () => {
  const runtime = typeof Bun !== "undefined" ? "bun" : "node";
  process.stdout.write(`sdk-server listening on ${port} (${mode}, ${runtime}, ${store.split(":")[0]})\n`);
});
