// Two gateways and two supervisors, each its own process, on one Redis: a task accepted by one gateway is streamed by
// the other and run by either supervisor; the waiting-request and stream limits count across both gateways; a gateway
// killed with SIGKILL changes nothing for the other's clients.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { CapacityLeases } from "../../../src/journal/index.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import { openStream } from "../../support/sse-client.ts";
import { waitFor } from "../actors/harness.ts";
import { errorInfo, message, rpc } from "../gateway/harness.ts";
import { artifactText, type Installation, installation, type Running } from "./installation.ts";
import { blockingEcho } from "./scenarios.ts";

let server: TestRedis;
let inst: Installation;
let a: Running & { url: string };
let b: Running & { url: string };
let workA: Running;
let workB: Running;

beforeAll(async () => {
  server = await startRedis();
  inst = await installation({
    redisUrl: server.url,
    env: {
      A2A_SERVER_MAX_WAITING_REQUESTS: "2",
      A2A_CLIENTS_MAX_WAITING_REQUESTS: "100",
      A2A_SERVER_MAX_STREAMS_PER_INSTALLATION: "2",
      A2A_SERVER_BLOCKING_WAIT_SECONDS: "30",
    },
  });
  [a, b, workA, workB] = await Promise.all([inst.gateway(), inst.gateway(), inst.work(), inst.work()]);
}, 60_000);

afterAll(async () => {
  await inst?.close();
  await server?.stop();
}, 30_000);

function accept(base: string, key: string, text: string) {
  return rpc(base, "SendMessage", { message: message(text), configuration: { returnImmediately: true } }, { key });
}

test("a task accepted by one gateway is streamed by the other, and both supervisors run tasks", async () => {
  const { key } = await inst.client();
  // (the sleep is the margin of the other gateway's snapshot before the first chunk, on a busy machine)
  const accepted = await accept(a.url, key, "[sleep 800] [chunks 4 150] one two three four");
  const id = accepted.body.result.task.id;
  const stream = await openStream(b.url, "SubscribeToTask", { id }, { key });
  expect(stream.status).toBe(200);
  await stream.until((r) => r.ended, 15_000);
  const [snapshot, ...events] = stream.results;
  expect(snapshot.task.id).toBe(id);
  const chunks = events.flatMap((r) => r.artifactUpdate?.artifact.parts.map((p: { text: string }) => p.text) ?? []);
  expect(chunks.length).toBeGreaterThan(1);
  expect(artifactText(snapshot.task) + chunks.join("")).toBe("one two three four");
  expect(events.at(-1).statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");

  // Tasks sent through both gateways are run by the actors of both supervisors (each heartbeat counts its runs).
  for (let i = 0; i < 6; i++) await blockingEcho(i % 2 === 0 ? a.url : b.url, key, `task ${i}`);
  const actorPid = (work: Running) =>
    /"actorPid":(\d+)/.exec(work.lines.find((l) => /"actorPid"/.test(l)) ?? "")?.[1] ?? "none";
  const busy = await waitFor(
    async () => {
      const ids = await inst.redis.zrange(inst.keys.workers(), 0, -1);
      const beats = await Promise.all(ids.map((id) => inst.redis.hgetall(inst.keys.worker(id))));
      const pids = beats.filter((beat) => Number(beat.done ?? 0) > 0).map((beat) => beat.pid ?? "");
      return pids.length === 2 ? pids.sort() : undefined;
    },
    5000,
    "two actors with runs done",
  );
  expect(busy).toEqual([actorPid(workA), actorPid(workB)].sort());
}, 30_000);

test("the waiting-request and stream limits count across both gateways", async () => {
  const { key } = await inst.client();
  const leases = new CapacityLeases(inst.redis);
  const faults = { key, profile: "faults" };
  const waits = [a.url, b.url].map((base) => rpc(base, "SendMessage", { message: message("[hang]") }, faults));
  await waitFor(async () => (await leases.count(inst.keys.waiting())) === 2, 10_000, "two waiting leases");
  for (const base of [a.url, b.url]) {
    const refused = await rpc(base, "SendMessage", { message: message("a third wait") }, { key });
    expect(refused.status).toBe(503);
    expect(errorInfo(refused).reason).toBe("WAITING_REQUESTS_LIMIT_EXCEEDED");
  }

  const listed = await rpc(a.url, "ListTasks", {}, faults);
  const hanging: string[] = listed.body.result.tasks.map((task: { id: string }) => task.id);
  expect(hanging).toHaveLength(2);
  const streams = [
    await openStream(a.url, "SubscribeToTask", { id: hanging[0] }, faults),
    await openStream(b.url, "SubscribeToTask", { id: hanging[1] }, faults),
  ];
  for (const stream of streams) expect(stream.status).toBe(200);
  for (const base of [a.url, b.url]) {
    const refused = await openStream(base, "SubscribeToTask", { id: hanging[0] }, faults);
    expect(errorInfo({ status: refused.status, headers: new Headers(), body: refused.json }).reason).toBe(
      "STREAMS_PER_INSTALLATION_LIMIT_EXCEEDED",
    );
  }

  for (const id of hanging) await rpc(b.url, "CancelTask", { id }, faults);
  for (const wait of await Promise.all(waits)) expect(wait.body.result.task.status.state).toBe("TASK_STATE_CANCELED");
  for (const stream of streams) await stream.until((r) => r.ended, 10_000);
  expect(await leases.count(inst.keys.waiting())).toBe(0);
}, 30_000);

test("a gateway killed with SIGKILL changes nothing for the other gateway's clients", async () => {
  const { key } = await inst.client();
  const accepted = await accept(b.url, key, "[sleep 300] [chunks 5 200] the stream goes on");
  const id = accepted.body.result.task.id;
  const stream = await openStream(b.url, "SubscribeToTask", { id }, { key });
  const cut = await openStream(a.url, "SubscribeToTask", { id }, { key });
  a.child.kill("SIGKILL");
  await a.exited;
  await cut.until((r) => r.ended, 5000);

  await stream.until((r) => r.ended, 15_000);
  expect(stream.results.at(-1).statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
  const [snapshot, ...events] = stream.results;
  const chunks = events.flatMap((r) => r.artifactUpdate?.artifact.parts.map((p: { text: string }) => p.text) ?? []);
  expect(artifactText(snapshot.task) + chunks.join("")).toBe("the stream goes on");
  await blockingEcho(b.url, key, "still served");
  expect((await rpc(b.url, "GetTask", { id }, { key })).body.result.status.state).toBe("TASK_STATE_COMPLETED");
}, 30_000);
