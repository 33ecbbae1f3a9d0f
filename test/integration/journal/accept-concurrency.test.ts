// Accept under concurrency against a real redis-server: racing retries of one messageId create one task and one run;
// the same messageId from two clients is two tasks.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { TaskJournal } from "../../../src/journal/index.ts";
import { journalFixture, userMessage } from "../../support/journal.ts";
import { keysUnder, startRedis, type TestRedis } from "../../support/redis.ts";
import { liveClient, PROFILE } from "./helpers.ts";

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server.stop();
});

describe("accept under concurrency", () => {
  test("50 concurrent accepts of one messageId from one client create exactly one task and one run", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const message = userMessage("concurrent");
    // five connections on the test's key space, so the calls really race inside Redis
    const settings = { livenessSeconds: 120, dedupSeconds: 3600, retryAfterSeconds: 5 };
    const journals = Array.from({ length: 5 }, () => new TaskJournal(server.client(), f.keys, settings));
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        (journals[i % journals.length] ?? f.journal).accept({ clientId, profile: PROFILE, profileQuota: 0, message }),
      ),
    );
    const ids = new Set(answers.map((a) => a.taskId));
    expect(ids.size).toBe(1);
    expect(answers.filter((a) => a.created).length).toBe(1);
    const all = await keysUnder(f.redis, f.prefix);
    const [taskId] = [...ids];
    expect(all.filter((key) => key.includes(":task:"))).toEqual([f.keys.task(0, taskId ?? "")]);
    expect(all.filter((key) => key.includes(":run:"))).toEqual([f.keys.run(0, taskId ?? "")]);
    expect(await f.redis.xlen(f.keys.queue(0))).toBe(1);
    // a queued task has no journal yet: it holds the revisions after the first
    expect(await f.redis.exists(f.keys.journal(0, taskId ?? ""))).toBe(0);
  });

  test("the same messageId from two different clients creates two tasks", async () => {
    const f = journalFixture(server);
    const first = await liveClient(f);
    const second = await liveClient(f);
    const message = userMessage("shared id");
    const [a, b] = await Promise.all([
      f.journal.accept({ clientId: first, profile: PROFILE, profileQuota: 0, message }),
      f.journal.accept({ clientId: second, profile: PROFILE, profileQuota: 0, message }),
    ]);
    expect(a?.created && b?.created).toBe(true);
    expect(a?.taskId).not.toBe(b?.taskId);
    const all = await keysUnder(f.redis, f.prefix);
    expect(all.filter((key) => key.includes(":task:")).length).toBe(2);
    expect(all.filter((key) => key.includes(":run:")).length).toBe(2);
    expect(await f.redis.xlen(f.keys.queue(0))).toBe(2);
  });
});
