// The same source under Deno: `deno run -A src/cli.ts gateway` and `… work` (actors under Deno too) on a real
// redis-server serve a blocking SendMessage, an accepted task, a stream (ended when its client leaves), a webhook, and
// the HTTP+JSON binding's send, get and stream, and the gRPC binding's (node:http2 under Deno).
// Skipped only when the deno binary is absent (npm ci installs it from the deno dev dependency).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { CapacityLeases } from "../../../src/journal/index.ts";
import { closeGrpcClients, grpcCall, openGrpcStream } from "../../support/grpc-client.ts";
import { freePort, startRedis, type TestRedis } from "../../support/redis.ts";
import { openRestStream, openStream } from "../../support/sse-client.ts";
import { waitFor } from "../actors/harness.ts";
import { message, rest, rpc } from "../gateway/harness.ts";
import { denoBinary, getTask, type Installation, installation, type Running } from "../multi/installation.ts";
import { acceptedThenCompleted, blockingEcho, pushDelivered, streamedEcho } from "../multi/scenarios.ts";
import { type Receiver, startReceiver } from "../push/receiver.ts";

const deno = denoBinary();
if (!deno) process.stderr.write("deno smoke test skipped: no deno binary in node_modules (run npm ci)\n");

/** The command line of a running process, from /proc. */
function commandLine(pid: number): string {
  return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
}

describe.skipIf(!deno)("under Deno", () => {
  let server: TestRedis;
  let inst: Installation;
  let gateway: Running & { url: string };
  let key: string;
  let hook: Receiver;
  let grpcAddress: string;

  beforeAll(async () => {
    server = await startRedis();
    hook = await startReceiver();
    const grpcPort = await freePort();
    grpcAddress = `127.0.0.1:${grpcPort}`;
    inst = await installation({
      redisUrl: server.url,
      allowHosts: [`127.0.0.1:${hook.port}`],
      env: { A2A_SERVER_GRPC_PORT: String(grpcPort) },
    });
    [gateway] = await Promise.all([inst.gateway("deno"), inst.work("deno", 1)]);
    ({ key } = await inst.client());
  }, 60_000);

  afterAll(async () => {
    closeGrpcClients();
    await inst?.close();
    await hook?.close();
    await server?.stop();
  }, 30_000);

  test("the gateway and the actors are deno processes", async () => {
    expect(commandLine(gateway.pid)).toContain(`${deno} run -A`);
    const pids = await waitFor(
      async () => {
        const ids = await inst.redis.zrange(inst.keys.workers(), 0, -1);
        const beats = await Promise.all(ids.map((id) => inst.redis.hget(inst.keys.worker(id), "pid")));
        return beats.length > 0 ? beats.map(Number) : undefined;
      },
      10_000,
      "an actor heartbeat",
    );
    for (const pid of pids) expect(commandLine(pid)).toMatch(/deno run -A .*src\/actors\/main\.ts/);
  });

  test("a blocking SendMessage waits for the echo", async () => {
    await blockingEcho(gateway.url, key, "hello from deno");
  });

  test("an accepted task completes", async () => {
    await acceptedThenCompleted(gateway.url, key, "accepted under deno");
  });

  test("SendStreamingMessage streams the run", async () => {
    await streamedEcho(gateway.url, key, "streamed by deno");
  }, 20_000);

  test("a client that goes away ends its stream: the gateway gives its lease back, the task goes on", async () => {
    const leases = new CapacityLeases(inst.redis);
    const faults = { key, profile: "faults" };
    const stream = await openStream(gateway.url, "SendStreamingMessage", { message: message("[hang]") }, faults);
    await stream.waitForEvents(1);
    const id = stream.results[0].task.id;
    expect(await leases.count(inst.keys.streams())).toBe(1);
    stream.abort();
    await waitFor(async () => (await leases.count(inst.keys.streams())) === 0, 10_000, "the stream lease released");
    expect((await getTask(gateway.url, key, id, "faults")).status.state).toBe("TASK_STATE_WORKING");
    await rpc(gateway.url, "CancelTask", { id }, faults);
  }, 20_000);

  test("a deno actor delivers the webhooks", async () => {
    await pushDelivered(gateway.url, key, "pushed by deno", hook);
  }, 20_000);

  test("HTTP+JSON: a blocking send, GetTask by its route, a stream of bare StreamResponses, a 404", async () => {
    const sent = await rest(gateway.url, "POST", "/message:send", { message: message("rest under deno") }, { key });
    expect(sent.status).toBe(200);
    expect(sent.body.task.status.state).toBe("TASK_STATE_COMPLETED");
    const got = await rest(gateway.url, "GET", `/tasks/${sent.body.task.id}?historyLength=0`, undefined, { key });
    expect(got.body.id).toBe(sent.body.task.id);
    const stream = await openRestStream(
      gateway.url,
      "POST",
      "/message:stream",
      { message: message("rest stream") },
      {
        key,
      },
    );
    await stream.until((r) => r.ended, 15_000);
    expect(stream.messages[0].task.id).toBeDefined();
    expect(stream.messages.at(-1).statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
    const missing = await rest(gateway.url, "GET", "/tasks/no-such-task", undefined, { key });
    expect(missing.status).toBe(404);
    expect(missing.body.error.status).toBe("NOT_FOUND");
  }, 20_000);

  test("gRPC: a blocking SendMessage, GetTask, a stream of StreamResponse messages, NOT_FOUND", async () => {
    const sent = await grpcCall(grpcAddress, "SendMessage", { message: message("grpc under deno") }, { key });
    expect(sent.status).toBe(0);
    expect(sent.body.task.status.state).toBe("TASK_STATE_COMPLETED");
    const got = await grpcCall(grpcAddress, "GetTask", { id: sent.body.task.id }, { key });
    expect(got.body.id).toBe(sent.body.task.id);
    const stream = await openGrpcStream(
      grpcAddress,
      "SendStreamingMessage",
      { message: message("grpc stream") },
      { key },
    );
    await stream.closed;
    expect(stream.error).toBeUndefined();
    expect(stream.events[0].task.id).toBeDefined();
    expect(stream.events.at(-1).statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
    const missing = await grpcCall(grpcAddress, "GetTask", { id: "no-such-task" }, { key });
    expect(missing.status).toBe(5);
    expect(missing.body.error.details[0]).toMatchObject({
      reason: "TASK_NOT_FOUND",
      metadata: { taskId: "no-such-task" },
    });
  }, 20_000);
});
