// Finds runs that no queue entry will ever bring to an actor again and queues them again. A failover that loses writes
// can leave a run running with its lease expired and its entry gone from the queue (or from the group's pending
// list), which XAUTOCLAIM cannot see. The search is a bounded sample of each shard's profile sets of queued and
// running tasks (an index the accept and the run's end keep anyway); the script decides, and changes nothing else.
import type { KeySpace } from "./keys.ts";
import { QUEUE_GROUP } from "./keys.ts";
import { REQUEUE_LOST } from "./lua/requeue-lost.ts";
import type { RedisLike } from "./scripts.ts";

export class LostRuns {
  constructor(
    private readonly redis: RedisLike,
    readonly keys: KeySpace,
  ) {}

  /**
   * Looks at up to `budget` queued and running tasks of a shard (a random sample of each profile's set; all of them
   * when the set is that small) and queues again each run whose entry is gone. Returns how many were queued again.
   */
  async repair(shard: number, profiles: readonly string[], budget: number): Promise<number> {
    if (budget <= 0 || profiles.length === 0) return 0;
    const k = this.keys;
    const perProfile = Math.max(1, Math.floor(budget / profiles.length));
    const sampled = await Promise.all(
      profiles.map(
        async (profile) =>
          ((await this.redis.call("SRANDMEMBER", k.profileActive(shard, profile), perProfile)) as string[] | null) ??
          [],
      ),
    );
    const ids = [...new Set(sampled.flat())];
    if (ids.length === 0) return 0;
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hmget(k.run(shard, id), "state", "lease", "client", "entry");
    const runs = ((await pipeline.exec()) ?? []).map(
      (reply) => (reply[1] as (string | null)[] | undefined) ?? [null, null, null, null],
    );
    const now = Date.now();
    // A queued run is normal while its entry is in the queue (a backlog holds many): read first, the script only for
    // one whose entry is missing. A running run past its lease is rare; the script decides (Redis's clock, the group).
    const queued = runs.flatMap(([state, , , entry], i) => (state === "queued" && entry ? [{ i, entry }] : []));
    const reads = this.redis.pipeline();
    for (const { entry } of queued) reads.xrange(k.queue(shard), entry, entry);
    const found = ((await reads.exec()) ?? []).map((reply) => ((reply[1] as unknown[] | undefined) ?? []).length > 0);
    const missing = new Set(queued.filter((_, j) => !found[j]).map(({ i }) => i));
    const candidates = ids.flatMap((id, i) => {
      const [state, lease, client] = runs[i] ?? [];
      const lapsed = state === "running" && Number(lease ?? 0) <= now;
      return lapsed || missing.has(i) ? [{ id, client: client ?? "" }] : [];
    });
    const replies = await Promise.all(candidates.map(({ id, client }) => this.requeue(shard, id, client)));
    return replies.filter((entry) => entry !== undefined).length;
  }

  /**
   * Queues a run again when its entry is gone (see requeueLost-3.lua); the new entry id, or undefined when the run was
   * left alone. `clientId` is the run's client.
   */
  async requeue(shard: number, taskId: string, clientId: string): Promise<string | undefined> {
    const k = this.keys;
    const reply = await REQUEUE_LOST.run(
      this.redis,
      { run: k.run(shard, taskId), queue: k.queue(shard), clientRunning: k.clientRunning(shard, clientId) },
      { group: QUEUE_GROUP },
    );
    return reply.ok ? reply.entryId : undefined;
  }
}
