// Harness of the full-text gate suite: a real `work --actors 1` process loading generated-handler.ts, a real gateway
// on port 0, a webhook receiver on 127.0.0.1, a client key, and an observer that records every channel of one task:
// the SSE frames of SendStreamingMessage and SubscribeToTask, GetTask and ListTasks answers during the run, the push
// notification bodies, and afterwards the journal (XRANGE).
import { join } from "node:path";
import { loadConfig } from "../../../src/config/index.ts";
import { type RunningGateway, startGateway } from "../../../src/gateway/index.ts";
import { parseJournalEntry } from "../../../src/journal/index.ts";
import { createLogger } from "../../../src/log.ts";
import type { StreamResponse } from "../../../src/protocol/index.ts";
import type { TestRedis } from "../../support/redis.ts";
import { openStream, type StreamRecording } from "../../support/sse-client.ts";
import {
  type CliProcess,
  cleanup,
  type Installation,
  installation,
  killStarted,
  startCli,
  waitFor,
  workers,
} from "../actors/harness.ts";
import { message, rpc } from "../gateway/harness.ts";

const HANDLER_MODULE = new URL("./generated-handler.ts", import.meta.url).pathname;

/** A profile served by the generated handler, with `extra` fields (guardrails, fullTextCheck). */
export function generatedProfile(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name,
    handler: "generated",
    description: `The ${name} agent.`,
    skill: { id: name, name, description: `Generated output (${name}).` },
    ...extra,
  };
}

/** Webhook bodies by task id, in arrival order. */
export interface Webhooks {
  /** The receiver's port: the allow-list names it. */
  port: number;
  url: string;
  bodies: Map<string, unknown[]>;
  stop(): void;
}

function startWebhooks(): Webhooks {
  const bodies = new Map<string, unknown[]>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const body = (await request.json()) as Record<string, { taskId?: string; id?: string } | undefined>;
      const taskId = body.statusUpdate?.taskId ?? body.artifactUpdate?.taskId ?? body.task?.id ?? "";
      bodies.set(taskId, [...(bodies.get(taskId) ?? []), body]);
      return new Response(null, { status: 204 });
    },
  });
  return {
    port: server.port ?? 0,
    url: `http://127.0.0.1:${server.port}/hook`,
    bodies,
    stop: () => void server.stop(true),
  };
}

export interface Gate {
  inst: Installation;
  webhooks: Webhooks;
  work: CliProcess;
  gateway: RunningGateway;
  base: string;
  key: string;
  stop(): Promise<void>;
}

export async function startGate(server: TestRedis, profiles: Record<string, unknown>[]): Promise<Gate> {
  const webhooks = startWebhooks();
  const inst = await installation(server, {
    profiles,
    env: {
      A2A_WORKER_CONCURRENCY: "16",
      A2A_SERVER_HOST: "127.0.0.1",
      A2A_LOG_LEVEL: "warn",
      A2A_PUSH_ALLOW_HOSTS: `127.0.0.1:${webhooks.port}`,
    },
  });
  const work = startCli(inst, ["work", "--actors", "1", "--handlers", HANDLER_MODULE]);
  await waitFor(
    async () => (await workers(inst)).length === 1,
    15_000,
    () => `an actor; ${work.lines.join("\n")}`,
  );
  const config = loadConfig({ file: join(inst.dir, "config.json"), env: inst.env });
  const gateway = await startGateway(config, { port: 0, logger: createLogger("gate-test", "error") });
  const { apiKey } = await inst.f.clients.add({ name: "gate-suite" });
  return {
    inst,
    webhooks,
    work,
    gateway,
    base: gateway.url,
    key: apiKey,
    async stop() {
      await gateway.stop();
      work.child.kill("SIGTERM");
      await Promise.race([work.exited, Bun.sleep(5000)]);
      killStarted();
      webhooks.stop();
      cleanup(inst);
    },
  };
}

export interface Observation {
  taskId: string;
  /** The results of SendStreamingMessage's frames, in order. */
  sent: StreamResponse[];
  /** The results of SubscribeToTask's frames, or its JSON answer when the task had ended already. */
  subscribed: unknown[];
  /** GetTask and ListTasks answers read while the task ran. */
  polls: unknown[];
  /** The task's journal after the end, oldest first. */
  journal: StreamResponse[];
  /** The push notification bodies of the task, up to the one of its closing state. */
  pushed: unknown[];
}

const within = <T>(promise: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([promise, Bun.sleep(ms).then(() => Promise.reject(new Error(`${what}: not within ${ms} ms`)))]);

/** Sends `text` to `profile` as a stream and watches every channel of the task it creates until the stream closes. */
export async function observe(gate: Gate, profile: string, text: string): Promise<Observation> {
  const options = { key: gate.key, profile };
  const params = { message: message(text), configuration: { taskPushNotificationConfig: { url: gate.webhooks.url } } };
  const sent = await openStream(gate.base, "SendStreamingMessage", params, options);
  if (sent.json) throw new Error(`SendStreamingMessage refused: ${JSON.stringify(sent.json)}`);
  await sent.waitForEvents(1);
  const task = sent.results[0].task as { id: string; contextId: string };
  const subscribed = await openStream(gate.base, "SubscribeToTask", { id: task.id }, options);
  const polls: unknown[] = [];
  const rpcOptions = { key: gate.key, profile };
  while (!sent.ended) {
    const [got, listed] = await Promise.all([
      rpc(gate.base, "GetTask", { id: task.id, historyLength: 50 }, rpcOptions),
      rpc(gate.base, "ListTasks", { contextId: task.contextId, includeArtifacts: true, historyLength: 50 }, rpcOptions),
    ]);
    polls.push(got.body, listed.body);
    await Bun.sleep(15);
  }
  await within(sent.closed, 20_000, "the SendStreamingMessage stream");
  // A JSON answer (the task had ended already) is complete as it is: its `closed` never resolves.
  if (subscribed.json === undefined) await within(subscribed.closed, 20_000, "the SubscribeToTask stream");
  const rows = await gate.inst.f.redis.xrange(gate.inst.f.keys.journal(0, task.id), "-", "+");
  const pushed = await waitFor(
    async () => {
      const bodies = gate.webhooks.bodies.get(task.id) ?? [];
      return bodies.some(closing) ? bodies : undefined;
    },
    10_000,
    `the push notification of task ${task.id}'s closing state`,
  );
  return {
    taskId: task.id,
    sent: sent.results,
    subscribed: recorded(subscribed),
    polls,
    journal: rows.map(([id, fields]) => parseJournalEntry(id, fields).event),
    pushed,
  };
}

const CLOSING = new Set([
  "TASK_STATE_COMPLETED",
  "TASK_STATE_FAILED",
  "TASK_STATE_CANCELED",
  "TASK_STATE_REJECTED",
  "TASK_STATE_INPUT_REQUIRED",
]);

function closing(body: unknown): boolean {
  const state = (body as { statusUpdate?: { status?: { state?: string } } }).statusUpdate?.status?.state;
  return state !== undefined && CLOSING.has(state);
}

function recorded(stream: StreamRecording): unknown[] {
  return stream.json === undefined ? stream.results : [stream.json];
}

/** Runs `work` for each item with at most `lanes` at once; resolves when all are done. */
export async function inLanes<T>(items: readonly T[], lanes: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await work(items[next++] as T);
  };
  await Promise.all(Array.from({ length: lanes }, lane));
}
