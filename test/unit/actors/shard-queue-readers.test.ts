// The cluster's queue readers: one read (and connection) per shard, each naming one stream, so no read crosses slots;
// a read that answers after read() returned is handed out by the next call, so no entry is dropped.
import { expect, test } from "bun:test";
import { createQueueReader, ShardQueueReaders } from "../../../src/actors/shard-queue-readers.ts";
import { KeySpace, type RedisLike } from "../../../src/journal/index.ts";
import { createLogger } from "../../../src/log.ts";

const logger = createLogger("test", "silent");
const keys = new KeySpace("p:", 3);

type Reply = [string, [string, string[]][]][] | null;

/** Connections whose blocking reads the test answers by hand: `answer(shard, reply)`. */
function fakeCluster() {
  const pending = new Map<string, (reply: Reply) => void>();
  const reads: string[][] = [];
  let connections = 0;
  const connect = (): RedisLike => {
    connections++;
    return {
      isCluster: true,
      call: (...args: (string | number)[]) => {
        const streams = args.slice(args.indexOf("STREAMS") + 1).map(String);
        reads.push(streams);
        return new Promise<Reply>((resolve) => pending.set(streams[0] ?? "", resolve));
      },
      disconnect: () => {},
    } as unknown as RedisLike;
  };
  const answer = (shard: number, reply: Reply) => {
    const queue = keys.queue(shard);
    pending.get(queue)?.(reply);
    pending.delete(queue);
  };
  return { connect, answer, reads, connections: () => connections };
}

function entry(shard: number, id: string): Reply {
  return [[keys.queue(shard), [[id, ["run", `r${id}`, "task", `t${id}`]]]]];
}

const options = (connect: () => RedisLike) => ({
  connect,
  keys,
  consumer: "me",
  blockMs: 2000,
  watchdogMarginMs: 3000,
  ensureGroups: async () => {},
  logger,
});

test("each shard is read on its own connection, one stream per read", async () => {
  const cluster = fakeCluster();
  const readers = new ShardQueueReaders(options(cluster.connect));
  const first = readers.read(4);
  await Bun.sleep(0);
  expect(cluster.connections()).toBe(3);
  expect(cluster.reads.sort()).toEqual([
    [keys.queue(0), ">"],
    [keys.queue(1), ">"],
    [keys.queue(2), ">"],
  ]);
  cluster.answer(1, entry(1, "1-0"));
  expect(await first).toEqual([{ shard: 1, id: "1-0", runId: "r1-0", taskId: "t1-0" }]);
  readers.close();
});

test("a read that answers after the call returned is handed out by the next call", async () => {
  const cluster = fakeCluster();
  const readers = new ShardQueueReaders(options(cluster.connect));
  const first = readers.read(4);
  await Bun.sleep(0);
  cluster.answer(0, null); // shard 0's BLOCK ran out
  expect(await first).toEqual([]);
  cluster.answer(2, entry(2, "7-0")); // delivered while nobody was waiting
  await Bun.sleep(0);
  const second = await readers.read(4);
  expect(second).toEqual([{ shard: 2, id: "7-0", runId: "r7-0", taskId: "t7-0" }]);
  // Shard 1's first read was still outstanding: only shards 0 and 2 were read again.
  expect(cluster.reads.filter(([stream]) => stream === keys.queue(1))).toHaveLength(1);
  expect(cluster.reads.filter(([stream]) => stream === keys.queue(0))).toHaveLength(2);
  readers.close();
});

test("one reader over every shard on a single Redis, one per shard on a cluster", () => {
  const cluster = fakeCluster();
  expect(createQueueReader(true, options(cluster.connect))).toBeInstanceOf(ShardQueueReaders);
  expect(createQueueReader(false, options(cluster.connect))).not.toBeInstanceOf(ShardQueueReaders);
});

test("interrupt answers the call in progress with nothing; what an outstanding read delivers later is not dropped", async () => {
  const cluster = fakeCluster();
  const readers = new ShardQueueReaders(options(cluster.connect));
  const first = readers.read(4);
  readers.interrupt();
  expect(await first).toEqual([]);
  cluster.answer(2, entry(2, "7-0"));
  expect(await readers.read(4)).toEqual([{ shard: 2, id: "7-0", runId: "r7-0", taskId: "t7-0" }]);
  // the interrupt sent nothing and started no read: each shard's first read is still the only one
  expect(cluster.reads.map(([stream]) => stream).sort()).toEqual([keys.queue(0), keys.queue(1), keys.queue(2)]);
  readers.close();
});
