// KeySpace: every key of a shard carries that shard's hash tag (so each script runs in one Redis Cluster slot), a
// client always maps to the same shard, and installation-wide keys carry no tag.
import { describe, expect, test } from "bun:test";
import { KeySpace } from "../../../src/journal/index.ts";

function hashTag(key: string): string | undefined {
  return /\{([^}]*)\}/.exec(key)?.[1];
}

describe("KeySpace", () => {
  test("one shard puts every client in shard 0", () => {
    const keys = new KeySpace("a2a:");
    for (const id of ["a", "b", "01JCLIENT", ""]) expect(keys.shardOf(id)).toBe(0);
  });

  test("shardOf is stable, in range, and spreads clients over the shards", () => {
    const keys = new KeySpace("a2a:", 4);
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 400; i++) {
      const shard = keys.shardOf(`client-${i}`);
      expect(shard).toBe(new KeySpace("other:", 4).shardOf(`client-${i}`));
      expect(shard).toBeGreaterThanOrEqual(0);
      expect(shard).toBeLessThan(4);
      counts[shard] = (counts[shard] ?? 0) + 1;
    }
    for (const count of counts) expect(count).toBeGreaterThan(50);
  });

  test("every per-shard key starts with the prefix and carries the shard's tag", () => {
    const keys = new KeySpace("p:", 8);
    const shard = keys.shardOf("client-1");
    const perShard = [
      keys.task(shard, "T"),
      keys.run(shard, "T"),
      keys.journal(shard, "T"),
      keys.dedup(shard, "client-1", "echo", "m-1"),
      keys.client(shard, "client-1"),
      keys.clientTasks(shard, "client-1", "echo"),
      keys.clientActive(shard, "client-1"),
      keys.profileActive(shard, "echo"),
      keys.live(shard),
      keys.queue(shard),
      keys.dead(shard),
      keys.taskStreams(shard, "T"),
      keys.clientStreams(shard, "client-1"),
    ];
    for (const key of perShard) {
      expect(key.startsWith(`p:{${shard}}:`)).toBe(true);
      expect(hashTag(key)).toBe(String(shard));
    }
    expect(new Set(perShard).size).toBe(perShard.length);
  });

  test("a task's run, journal and task hash are distinct keys addressed by the task id", () => {
    const keys = new KeySpace("p:");
    expect(keys.task(0, "T1")).toBe("p:{0}:task:T1");
    expect(keys.run(0, "T1")).toBe("p:{0}:run:T1");
    expect(keys.journal(0, "T1")).toBe("p:{0}:journal:T1");
    expect(keys.run(0, "T1")).not.toBe(keys.run(0, "T2"));
  });

  test("installation-wide keys and channels carry no hash tag", () => {
    const keys = new KeySpace("p:", 8);
    for (const key of [
      keys.apiKey("abc"),
      keys.clients(),
      keys.worker("w1"),
      keys.workers(),
      keys.waiting(),
      keys.streams(),
      keys.eventsChannel(),
      keys.cancelChannel(),
    ]) {
      expect(key.startsWith("p:")).toBe(true);
      expect(hashTag(key)).toBeUndefined();
    }
  });
});
