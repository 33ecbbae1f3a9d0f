// The queue reader's watchdog: a blocking read that does not return within BLOCK + margin has its connection
// dropped and replaced; replies are turned into queue entries of the right shard.
import { expect, test } from "bun:test";
import type { Redis } from "ioredis";
import { QueueReader } from "../../../src/actors/queue-reader.ts";
import { KeySpace, toQueueEntries } from "../../../src/journal/index.ts";
import { createLogger } from "../../../src/log.ts";

const logger = createLogger("test", "silent");

/** A connection whose reads answer from a script; `undefined` hangs forever. */
function fakeConnection(replies: unknown[], log: string[]): Redis {
  let disconnected = false;
  return {
    call: (...args: unknown[]) => {
      log.push(args.map(String).join(" "));
      const reply = replies.shift();
      return reply === undefined ? new Promise(() => {}) : Promise.resolve(reply);
    },
    disconnect: () => {
      disconnected = true;
      log.push(`disconnect ${disconnected}`);
    },
  } as unknown as Redis;
}

test("a hung read is abandoned after BLOCK + margin and the next read uses a new connection", async () => {
  const keys = new KeySpace("p:", 2);
  const log: string[] = [];
  const connections: string[] = [];
  const reply = [["p:{1}:queue", [["5-0", ["run", "r1", "task", "t1"]]]]];
  const scripts = [[undefined], [reply]];
  const reader = new QueueReader({
    connect: () => {
      connections.push(`c${connections.length + 1}`);
      return fakeConnection(scripts.shift() ?? [], log);
    },
    keys,
    consumer: "me",
    blockMs: 50,
    watchdogMarginMs: 50,
    ensureGroups: async () => {},
    logger,
  });
  const started = Date.now();
  expect(await reader.read(3)).toEqual([]);
  expect(Date.now() - started).toBeGreaterThanOrEqual(95);
  expect(await reader.read(3)).toEqual([{ shard: 1, id: "5-0", runId: "r1", taskId: "t1" }]);
  expect(connections).toEqual(["c1", "c2"]);
  expect(log[0]).toBe("XREADGROUP GROUP actors me COUNT 3 BLOCK 50 STREAMS p:{0}:queue p:{1}:queue > >");
  expect(log[1]).toBe("disconnect true");
});

test("NOGROUP re-creates the groups", async () => {
  let ensured = 0;
  const reader = new QueueReader({
    connect: () =>
      ({ call: () => Promise.reject(new Error("NOGROUP No such key")), disconnect: () => {} }) as unknown as Redis,
    keys: new KeySpace("p:", 1),
    consumer: "me",
    blockMs: 50,
    watchdogMarginMs: 50,
    ensureGroups: async () => {
      ensured += 1;
    },
    logger,
  });
  expect(await reader.read(1)).toEqual([]);
  expect(ensured).toBe(1);
});

test("toQueueEntries drops deleted entries and entries without run or task", () => {
  expect(
    toQueueEntries(0, [
      ["1-0", ["run", "r", "task", "t"]],
      ["2-0", null],
      ["3-0", ["run", "r"]],
    ]),
  ).toEqual([{ shard: 0, id: "1-0", runId: "r", taskId: "t" }]);
});
