// A Cluster moving slots under the gateway, two ways its commands fail, each seen in the failover scenario as -32603
// "Internal error" answers. A pipeline: ioredis does not follow the MOVED replies of a batch whose commands were
// redirected to different slots, so each command fails with its own MOVED (seen when the gateway's connection sent each
// tick's commands as one pipeline; the journal's own pipelines still can meet it). A single command: ioredis follows
// its redirections, and gives up after 16 when the nodes disagree on the slot (seen once the connection stopped
// auto-pipelining). Either way no node ran the command: the gateway must answer STORE_UNAVAILABLE (retry), as for any
// other store that is not there for a moment.
import { afterAll, beforeAll, expect, test } from "bun:test";
import calculateSlot from "cluster-key-slot";
import type { Redis } from "ioredis";
import { createRedis, storeFailure } from "../../../src/journal/index.ts";
import { StoreUnavailableError } from "../../../src/protocol/index.ts";
import { type LocalCluster, startCluster } from "./local-cluster.ts";

let cluster: LocalCluster;
beforeAll(async () => {
  cluster = await startCluster();
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
}, 30_000);

/** Two keys of different slots, both served by `master`. */
async function twoSlotsOf(master: string): Promise<[string, string]> {
  const keys: string[] = [];
  for (let i = 0; keys.length < 2; i++) {
    const key = `redirect:${i}`;
    if ((await cluster.masterOf(key)) !== master) continue;
    if (keys.some((other) => calculateSlot(other) === calculateSlot(key))) continue;
    keys.push(key);
  }
  return keys as [string, string];
}

/** Hands `slot` (empty) to the master `to`, as a resharding or a failover does: every master learns it. */
async function moveSlot(slot: number, to: string): Promise<void> {
  const target = cluster.node(to);
  const id = String(await target.call("CLUSTER", "MYID"));
  await target.call("CLUSTER", "SETSLOT", String(slot), "NODE", id);
  for (const master of await cluster.masters()) {
    if (master !== to) await cluster.node(master).call("CLUSTER", "SETSLOT", String(slot), "NODE", id);
  }
}

test("regression: a batch redirected to two slots fails each command with MOVED, which is STORE_UNAVAILABLE", async () => {
  const [from, to] = await cluster.masters();
  if (from === undefined || to === undefined) throw new Error("a cluster of one master");
  const keys = await twoSlotsOf(from);
  const redis = createRedis({ url: "redis://127.0.0.1", cluster: cluster.nodes }, "a2a-gateway", {
    maxRetriesPerRequest: 1,
  }) as Redis;
  redis.on("error", () => {});
  try {
    // The client learns the slot map; then both slots move while it still sends them to `from`.
    expect(await Promise.all(keys.map((key) => redis.get(key)))).toEqual([null, null]);
    for (const key of keys) await moveSlot(calculateSlot(key), to);
    const pipeline = redis.pipeline();
    for (const key of keys) pipeline.get(key);
    const results = (await pipeline.exec()) ?? [];
    const failures = results.flatMap(([error]) => (error ? [error] : []));
    // What ioredis hands over: one MOVED per command, each naming its own slot (so the batch is not retried).
    expect(failures.map((error) => error.message)).toEqual(
      keys.map((key) => expect.stringMatching(new RegExp(`^MOVED ${calculateSlot(key)} `))),
    );
    for (const error of failures) expect(() => storeFailure(error)).toThrow(StoreUnavailableError);
  } finally {
    redis.disconnect();
  }
}, 30_000);

test("regression: a command whose redirections go round (a master that handed its slot to another, which takes it for the first's) fails as ioredis gives up, which is STORE_UNAVAILABLE", async () => {
  const [from, to] = await cluster.masters();
  if (from === undefined || to === undefined) throw new Error("a cluster of one master");
  let key = "";
  for (let i = 0; key === ""; i++) if ((await cluster.masterOf(`round:${i}`)) === from) key = `round:${i}`;
  const redis = createRedis({ url: "redis://127.0.0.1", cluster: cluster.nodes }, "a2a-gateway", {
    maxRetriesPerRequest: 1,
  }) as Redis;
  redis.on("error", () => {});
  try {
    // The client learns the slot map; then `from` names `to` as the slot's master while `to` still names `from`.
    expect(await redis.get(key)).toBeNull();
    const toId = String(await cluster.node(to).call("CLUSTER", "MYID"));
    await cluster.node(from).call("CLUSTER", "SETSLOT", String(calculateSlot(key)), "NODE", toId);
    const failure = await redis.get(key).then(
      () => undefined,
      (error: Error) => error,
    );
    // What ioredis hands over once its 16 redirections are spent (as in a failover, before the slot map settles).
    expect(failure?.message).toStartWith("Too many Cluster redirections");
    expect(() => storeFailure(failure)).toThrow(StoreUnavailableError);
  } finally {
    redis.disconnect();
  }
}, 30_000);
