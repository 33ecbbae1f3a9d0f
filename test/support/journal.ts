// Journal fixtures for integration tests: a key space of the test's own, the gateway and worker APIs over it, and a
// client record to accept tasks for.
import type { Redis } from "ioredis";
import { ClientRegistry, type JournalSettings, KeySpace, RunLedger, TaskJournal } from "../../src/journal/index.ts";
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
