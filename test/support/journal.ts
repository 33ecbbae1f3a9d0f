// Journal fixtures for integration tests: a key space of the test's own, the gateway and worker APIs over it, and a
// client record to accept tasks for.
import type { Redis } from "ioredis";
import {
  ClientRegistry,
  type JournalSettings,
  KeySpace,
  type OutboxDelivery,
  RunLedger,
  TaskJournal,
} from "../../src/journal/index.ts";
import type { Message } from "../../src/protocol/index.ts";
import { type TestRedis, testPrefix } from "./redis.ts";

export interface JournalFixture {
  redis: Redis;
  prefix: string;
  keys: KeySpace;
  journal: TaskJournal;
  ledger: RunLedger;
  clients: ClientRegistry;
}

export function journalFixture(server: TestRedis, settings: Partial<JournalSettings> = {}, shards = 1): JournalFixture {
  const redis = server.client();
  const prefix = testPrefix();
  const keys = new KeySpace(prefix, shards);
  const journal = new TaskJournal(redis, keys, {
    livenessSeconds: 120,
    dedupSeconds: 3600,
    retryAfterSeconds: 5,
    ...settings,
  });
  return { redis, prefix, keys, journal, ledger: new RunLedger(redis, keys), clients: new ClientRegistry(redis, keys) };
}

let counter = 0;

/** A user message with a fresh messageId. */
export function userMessage(text: string, extra: Partial<Message> = {}): Message {
  counter += 1;
  return { messageId: `m-${Date.now()}-${counter}`, role: "ROLE_USER", parts: [{ text }], ...extra };
}

/**
 * A task's pending webhook deliveries as its outbox holds them: each config's queue from its head, configs by id (the
 * counters `n:` and `d:` say where each queue's head is).
 */
export async function queuedDeliveries(
  redis: Redis,
  keys: KeySpace,
  taskId: string,
  shard = 0,
): Promise<OutboxDelivery[]> {
  const fields = await redis.hgetall(keys.pushOutbox(shard, taskId));
  const queued: { cfg: string; index: number; delivery: OutboxDelivery }[] = [];
  for (const [field, value] of Object.entries(fields)) {
    const match = /^(\d+):(.*)$/s.exec(field);
    if (match) queued.push({ cfg: match[2] ?? "", index: Number(match[1]), delivery: JSON.parse(value) });
  }
  queued.sort((a, b) => (a.cfg === b.cfg ? a.index - b.index : a.cfg < b.cfg ? -1 : 1));
  return queued.map((entry) => entry.delivery);
}
