// A drain ends the actor's blocking queue read at once (CLIENT UNBLOCK from the command connection) instead of waiting
// out its BLOCK, so that an idle actor stops when it is told to: on a real redis-server, a read blocked for a minute
// answers [] when interrupted, no entry is lost, and the connection goes on reading; a `work` process told to stop
// while idle has its blocked read ended that way.
import { expect, test } from "bun:test";
import { QueueReader } from "../../../src/actors/queue-reader.ts";
import { QUEUE_GROUP, RunQueue } from "../../../src/journal/index.ts";
import { createLogger } from "../../../src/log.ts";
import { type Installation, installationSuite, liveWorkers, startCli, waitFor } from "./harness.ts";

const BLOCK_MS = 60_000;
const newInstallation = installationSuite();

function reader(inst: Installation, consumer: string): QueueReader {
  const { keys, redis } = inst.f;
  return new QueueReader({
    connect: () => redis.duplicate(),
    keys,
    consumer,
    blockMs: BLOCK_MS,
    watchdogMarginMs: BLOCK_MS,
    ensureGroups: async () => {},
    unblocker: new RunQueue(redis, keys),
    logger: createLogger("test", "silent"),
  });
}

/** Resolves once Redis holds `count` clients blocked in XREADGROUP: the state CLIENT UNBLOCK acts on. */
async function blockedReads(inst: Installation, count: number): Promise<void> {
  await waitFor(
    async () => {
      const list = (await inst.f.redis.client("LIST")) as string;
      const blocked = list.split("\n").filter((line) => / flags=\S*b\S* /.test(line) && /cmd=xreadgroup/.test(line));
      return blocked.length === count;
    },
    10_000,
    `${count} blocked queue reads`,
  );
}

async function unblockCalls(inst: Installation): Promise<number> {
  const stats = await inst.f.redis.info("commandstats");
  return Number(/cmdstat_client\|unblock:calls=(\d+)/.exec(stats)?.[1] ?? 0);
}

test("an interrupted read answers [] at once; the connection reads on and nothing queued meanwhile is lost", async () => {
  const inst = await newInstallation();
  const { redis, keys } = inst.f;
  await redis.xgroup("CREATE", keys.queue(0), QUEUE_GROUP, "$", "MKSTREAM");
  const queue = reader(inst, "c1");
  const read = queue.read(5);
  await blockedReads(inst, 1);
  queue.interrupt();
  expect(await read).toEqual([]);
  await blockedReads(inst, 0);

  await redis.xadd(keys.queue(0), "*", "run", "r1", "task", "t1");
  expect(await queue.read(5)).toEqual([expect.objectContaining({ shard: 0, runId: "r1", taskId: "t1" })]);

  // an interrupt with no read in progress leaves the next read blocking until an entry comes
  queue.interrupt();
  const next = queue.read(5);
  await blockedReads(inst, 1);
  await redis.xadd(keys.queue(0), "*", "run", "r2", "task", "t2");
  expect(await next).toEqual([expect.objectContaining({ runId: "r2", taskId: "t2" })]);
  queue.close();
}, 30_000);

test("SIGTERM to an idle worker ends its blocked queue read at once", async () => {
  const inst = await newInstallation();
  await blockedReads(inst, 0);
  const before = await unblockCalls(inst);
  const work = startCli(inst, ["work", "--actors", "1"]);
  await liveWorkers(inst, 1);
  await blockedReads(inst, 1);
  work.child.kill("SIGTERM");
  expect((await work.exited).code).toBe(0);
  expect(await unblockCalls(inst)).toBeGreaterThan(before);
}, 30_000);
