// The runtime on a 3-master Redis Cluster (redis.cluster set, redis.shards 6): a gateway and a supervisor as real
// processes; the run queues spread over several masters; accept, blocking wait, resume, cancel, the waiting limit, a
// stream, a webhook and the reclaim of a run whose actor was killed all work as on one Redis.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { CapacityLeases, TaskJournal } from "../../../src/journal/index.ts";
import { waitFor } from "../actors/harness.ts";
import { errorInfo, message, rpc } from "../gateway/harness.ts";
import { artifactText, type Installation, installation, type Running, taskInState } from "../multi/installation.ts";
import { acceptedThenCompleted, blockingEcho, pushDelivered, streamedEcho } from "../multi/scenarios.ts";
import { type Receiver, startReceiver } from "../push/receiver.ts";
import { type LocalCluster, startCluster } from "./local-cluster.ts";

const SHARDS = 6;

let cluster: LocalCluster;
let inst: Installation;
let gateway: Running & { url: string };
/** A loopback webhook receiver: the installation allow-lists its port. */
let hook: Receiver;
/** Clients whose shards are served by different masters: [master, client]. */
const clients: { master: string; id: string; key: string }[] = [];

beforeAll(async () => {
  cluster = await startCluster();
  hook = await startReceiver();
  inst = await installation({
    cluster: cluster.nodes,
    // One client takes all four waiting slots here: its share is raised above the installation's limit.
    env: { A2A_REDIS_SHARDS: String(SHARDS), A2A_CLIENTS_MAX_WAITING_REQUESTS: "100" },
    allowHosts: [`127.0.0.1:${hook.port}`],
  });
  [gateway] = await Promise.all([inst.gateway(), inst.work("bun", 2)]);
  const masters = new Set<string>();
  while (masters.size < 3) {
    const client = await inst.client();
    const master = await cluster.masterOf(inst.keys.queue(inst.keys.shardOf(client.id)));
    if (masters.has(master)) continue;
    masters.add(master);
    clients.push({ master, ...client });
  }
}, 60_000);

afterAll(async () => {
  await inst?.close();
  await hook?.close();
  await cluster?.stop();
}, 30_000);

describe("on a Redis Cluster", () => {
  test("the run-queue shards live on more than one master, and runs pass through each of them", async () => {
    const byMaster = new Map<string, string[]>();
    for (let shard = 0; shard < SHARDS; shard++) {
      const queue = inst.keys.queue(shard);
      const master = await cluster.masterOf(queue);
      // Read on the master itself, without the cluster client: the stream is there (a wrong node answers MOVED).
      expect(await cluster.node(master).type(queue)).toBe("stream");
      byMaster.set(master, [...(byMaster.get(master) ?? []), queue]);
    }
    expect(byMaster.size).toBeGreaterThan(1);

    for (const client of clients) await acceptedThenCompleted(gateway.url, client.key, `via ${client.master}`);
    const used = new Set<string>();
    for (const client of clients) {
      const queue = inst.keys.queue(inst.keys.shardOf(client.id));
      const info = (await cluster.node(client.master).call("XINFO", "STREAM", queue)) as unknown[];
      const added = Number(info[info.indexOf("entries-added") + 1]);
      if (added > 0) used.add(client.master);
    }
    expect(used.size).toBe(3);
  });

  test("operators see every shard: /readyz, status and a sweep tick read every master", async () => {
    const ready = await fetch(`${gateway.url}/readyz`);
    expect(ready.status).toBe(200);
    const body = (await ready.json()) as { shards: { live: boolean }[] };
    expect(body.shards.map((s) => s.live)).toEqual(Array.from({ length: SHARDS }, () => true));
    const status = await inst.cli(["status", "--json", "--minimum-workers", "2"]);
    expect(status.code).toBe(0);
    const report = JSON.parse(status.stdout) as { workers: { mode: string; live: boolean }[]; ok: boolean };
    expect(report.workers.filter((w) => w.mode === "consume" && w.live)).toHaveLength(2);
    // A sweep tick reads every shard's queue, beats and applies retention without a cross-slot command.
    expect((await inst.cli(["sweep", "--once"])).code).toBe(0);
  }, 20_000);

  test("a blocking SendMessage waits for the echo, for clients on every master", async () => {
    for (const client of clients) await blockingEcho(gateway.url, client.key, `blocking on ${client.master}`);
  });

  test("an INPUT_REQUIRED task resumes with the follow-up", async () => {
    const { key } = clients[1] ?? clients[0]!;
    const first = await rpc(gateway.url, "SendMessage", { message: message("[input] first") }, { key });
    const task = first.body.result.task;
    expect(task.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
    const second = await rpc(gateway.url, "SendMessage", { message: message("second", { taskId: task.id }) }, { key });
    expect(second.body.result.task.id).toBe(task.id);
    expect(second.body.result.task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(artifactText(second.body.result.task)).toBe("second");
  });

  test("a running task is canceled", async () => {
    const { key } = clients[2] ?? clients[0]!;
    const faults = { key, profile: "faults" };
    const accepted = await rpc(
      gateway.url,
      "SendMessage",
      { message: message("[hang]"), configuration: { returnImmediately: true } },
      faults,
    );
    const id = accepted.body.result.task.id;
    await taskInState(gateway.url, key, id, "TASK_STATE_WORKING", 10_000, "faults");
    const canceled = await rpc(gateway.url, "CancelTask", { id }, faults);
    expect(canceled.body.result.status.state).toBe("TASK_STATE_CANCELED");
    expect((await taskInState(gateway.url, key, id, "TASK_STATE_CANCELED", 10_000, "faults")).id).toBe(id);
  });

  test("the installation-wide waiting limit holds on its own key, and a refusal stores nothing", async () => {
    const { key } = clients[0]!;
    const leases = new CapacityLeases(inst.redis);
    const faults = { key, profile: "faults" };
    const listed = async () => (await rpc(gateway.url, "ListTasks", {}, faults)).body.result.totalSize as number;
    const before = await listed();
    const waits = Array.from({ length: 4 }, () =>
      rpc(gateway.url, "SendMessage", { message: message("[hang]") }, faults),
    );
    await waitFor(async () => (await leases.count(inst.keys.waiting())) === 4, 10_000, "four waiting leases");
    const refused = await rpc(gateway.url, "SendMessage", { message: message("a fifth wait") }, faults);
    expect(refused.status).toBe(503);
    expect(errorInfo(refused).reason).toBe("WAITING_REQUESTS_LIMIT_EXCEEDED");
    expect(await listed()).toBe(before + 4);

    // with includeArtifacts a page reads its tasks and their chunk stores in one transaction: one slot per shard
    const page = await rpc(gateway.url, "ListTasks", { pageSize: 4, includeArtifacts: true }, faults);
    expect(page.body.result.tasks).toHaveLength(4);
    for (const task of page.body.result.tasks) await rpc(gateway.url, "CancelTask", { id: task.id }, faults);
    for (const wait of await Promise.all(waits)) expect(wait.body.result.task.status.state).toBe("TASK_STATE_CANCELED");
    expect(await leases.count(inst.keys.waiting())).toBe(0);
  }, 20_000);

  test("a ListTasks page is weighed against its byte bound by one script on the client's master", async () => {
    const { id, key } = clients[1]!;
    for (let i = 0; i < 3; i++) {
      const accepted = await rpc(
        gateway.url,
        "SendMessage",
        { message: message(`weighed ${i}`), configuration: { returnImmediately: true } },
        { key, profile: "echo" },
      );
      expect(accepted.status).toBe(200);
    }
    const journal = new TaskJournal(inst.redis, inst.keys, {
      livenessSeconds: 60,
      dedupSeconds: 60,
      retryAfterSeconds: 1,
    });
    // a bound of one byte: every page holds one task, weighed with its artifacts' keys too when it reads them
    for (const includeArtifacts of [false, true]) {
      const page = await journal.list(id, { profile: "echo", pageSize: 10, maxBytes: 1, includeArtifacts });
      expect(page.records).toHaveLength(1);
      expect(page.nextPageToken).not.toBe("");
    }
  });

  test("SendStreamingMessage streams the snapshot, the chunks and the end", async () => {
    for (const client of clients) await streamedEcho(gateway.url, client.key, "streamed over the cluster");
  }, 20_000);

  test("a worker delivers the task's webhooks", async () => {
    await pushDelivered(gateway.url, clients[0]!.key, "pushed from the cluster", hook);
  });

  test("the run of a SIGKILLed actor is reclaimed after its lease and completes", async () => {
    const client = clients[0]!;
    const accepted = await rpc(
      gateway.url,
      "SendMessage",
      { message: message("[sleep 2500] survived"), configuration: { returnImmediately: true } },
      { key: client.key },
    );
    const id = accepted.body.result.task.id;
    await taskInState(gateway.url, client.key, id, "TASK_STATE_WORKING");
    const shard = inst.keys.shardOf(client.id);
    const owner = await inst.redis.hget(inst.keys.run(shard, id), "owner");
    const pid = Number(await inst.redis.hget(inst.keys.worker(owner ?? ""), "pid"));
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, "SIGKILL");

    const done = await taskInState(gateway.url, client.key, id, "TASK_STATE_COMPLETED", 20_000);
    expect(artifactText(done)).toBe("survived");
    expect(await inst.redis.hget(inst.keys.run(shard, id), "fence")).toBe("2");
  }, 30_000);
});
