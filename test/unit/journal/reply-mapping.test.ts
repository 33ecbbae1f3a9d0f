// The typed APIs over a fake connection that answers each script with a chosen reply: every script code maps to its
// one error or result, and every call passes the script's number of keys, all in one hash-tagged shard.
import { describe, expect, test } from "bun:test";
import type { Redis } from "ioredis";
import { KeySpace, RunLedger, type ScriptName, TaskJournal } from "../../../src/journal/index.ts";
import {
  CapacityError,
  MessageIdReusedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnauthenticatedError,
  UnsupportedOperationError,
  WorkerUnavailableError,
} from "../../../src/protocol/index.ts";

type Reply = number | string | null | Reply[];

interface Call {
  script: string;
  keys: string[];
  args: (string | number)[];
}

/** Stands in for ioredis: `defineCommand` installs a function that records the call and returns the queued reply. */
class FakeRedis {
  readonly calls: Call[] = [];
  /** What ioredis says of a connection: a Cluster's calls must keep every key in one slot. */
  isCluster = false;
  private readonly replies = new Map<string, Reply[]>();

  answer(script: ScriptName, ...replies: Reply[]): this {
    this.replies.set(script, [...(this.replies.get(script) ?? []), ...replies]);
    return this;
  }

  defineCommand(name: string, definition: { numberOfKeys: number }): void {
    const script = name.replace(/^a2a_/, "");
    Object.assign(this, {
      [name]: async (...all: (string | number)[]) => {
        this.calls.push({
          script,
          keys: all.slice(0, definition.numberOfKeys).map(String),
          args: all.slice(definition.numberOfKeys),
        });
        const queue = this.replies.get(script) ?? [];
        const reply = queue.length > 1 ? queue.shift() : queue[0];
        if (reply === undefined) throw new Error(`no reply queued for ${script}`);
        return reply;
      },
    });
  }

  async hget(): Promise<string | null> {
    return "ctx-1";
  }

  /** A task's fields, read by a claim whose queue entry does not name its client (or profile and context). */
  async hmget(_key: string, ...fields: string[]): Promise<(string | null)[]> {
    return fields.map((field) => (field === "cli" ? "client-7" : null));
  }

  asRedis(): Redis {
    return this as unknown as Redis;
  }
}

const keys = new KeySpace("p:", 8);
const settings = { livenessSeconds: 120, dedupSeconds: 60, retryAfterSeconds: 9 };
const message = { messageId: "m1", role: "ROLE_USER" as const, parts: [{ text: "hi" }] };
const acceptInput = { clientId: "client-7", profile: "echo", profileQuota: 3, message };
const shard = keys.shardOf("client-7");
const snapshotReply: Reply = [
  ["id", "T1", "cli", "client-7", "prof", "echo", "state", "TASK_STATE_WORKING", "rev", "2"],
  "5-0",
];

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe("TaskJournal maps script codes to errors", () => {
  test("accept: {1}/{0} are created/duplicate; -1..-10 are the documented refusals", async () => {
    const journal = (fake: FakeRedis) => new TaskJournal(fake.asRedis(), keys, settings);
    const created = await journal(new FakeRedis().answer("accept", [1, "T1"])).accept(acceptInput);
    expect(created).toMatchObject({ created: true, taskId: "T1", record: { state: "TASK_STATE_SUBMITTED", rev: 1 } });
    expect(await journal(new FakeRedis().answer("accept", [0, "T0"])).accept(acceptInput)).toEqual({
      created: false,
      taskId: "T0",
    });
    const refusals: [number, (error: unknown) => void][] = [
      [-1, (e) => expect(e).toMatchObject({ reason: "WORKER_UNAVAILABLE", retryAfterSeconds: 9 })],
      [-2, (e) => expect(e).toMatchObject({ reason: "CLIENT_TASK_LIMIT_EXCEEDED", retryAfterSeconds: 9 })],
      [-3, (e) => expect(e).toMatchObject({ reason: "PROFILE_QUOTA_EXCEEDED", metadata: { profile: "echo" } })],
      [-4, (e) => expect(e).toBeInstanceOf(MessageIdReusedError)],
      [-5, (e) => expect(e).toBeInstanceOf(UnauthenticatedError)],
      [
        -6,
        (e) => expect(e).toMatchObject({ reason: "CLIENT_STORAGE_LIMIT_EXCEEDED", metadata: { clientId: "client-7" } }),
      ],
      [-7, (e) => expect(e).toMatchObject({ reason: "PROFILE_STORAGE_LIMIT_EXCEEDED", metadata: { profile: "echo" } })],
      [-8, (e) => expect(e).toMatchObject({ reason: "INTERRUPTED_TASKS_LIMIT_EXCEEDED", retryAfterSeconds: 9 })],
      [-9, (e) => expect(e).toMatchObject({ name: "WaitingFullError", which: "client" })],
      [-10, (e) => expect(e).toMatchObject({ name: "WaitingFullError", which: "installation" })],
      [-11, (e) => expect(String(e)).toContain("unexpected script reply -11")],
    ];
    for (const [code, check] of refusals)
      check(await rejection(journal(new FakeRedis().answer("accept", code)).accept(acceptInput)));
    const worker = await rejection(journal(new FakeRedis().answer("accept", -1)).accept(acceptInput));
    expect(worker).toBeInstanceOf(WorkerUnavailableError);
    const limit = await rejection(journal(new FakeRedis().answer("accept", -2)).accept(acceptInput));
    expect(limit).toBeInstanceOf(CapacityError);
  });

  test("resume: -6 not found, -7 terminal, -8 not waiting, -10/-11 storage; the others as accept", async () => {
    const resume = (code: number) =>
      rejection(
        new TaskJournal(new FakeRedis().answer("resume", code).asRedis(), keys, settings).resume({
          ...acceptInput,
          taskId: "T1",
        }),
      );
    expect(await resume(-1)).toBeInstanceOf(WorkerUnavailableError);
    expect(await resume(-3)).toMatchObject({ reason: "PROFILE_QUOTA_EXCEEDED" });
    expect(await resume(-4)).toBeInstanceOf(MessageIdReusedError);
    expect(await resume(-5)).toBeInstanceOf(UnauthenticatedError);
    expect(await resume(-6)).toBeInstanceOf(TaskNotFoundError);
    const terminal = await resume(-7);
    expect(terminal).toBeInstanceOf(UnsupportedOperationError);
    expect(await resume(-8)).toBeInstanceOf(UnsupportedOperationError);
    expect(((await resume(-8)) as Error).message).not.toBe((terminal as Error).message);
    expect(await resume(-10)).toMatchObject({ reason: "CLIENT_STORAGE_LIMIT_EXCEEDED" });
    expect(await resume(-11)).toMatchObject({ reason: "PROFILE_STORAGE_LIMIT_EXCEEDED" });
  });

  test("cancel: {1} and {0} are canceled now, {2} is requested, -1 not found, -2 not cancelable", async () => {
    const cancel = (reply: Reply) =>
      new TaskJournal(
        new FakeRedis().answer("snapshot", snapshotReply).answer("cancel", reply).asRedis(),
        keys,
        settings,
      ).cancel("client-7", "T1", "echo", { retentionSeconds: 10, journalRetentionSeconds: 5 });
    expect(await cancel([1, 3])).toEqual({ canceledNow: true });
    expect(await cancel([0, 3])).toEqual({ canceledNow: true });
    expect(await cancel([2, 2])).toEqual({ canceledNow: false });
    expect(await rejection(cancel(-1))).toBeInstanceOf(TaskNotFoundError);
    const notCancelable = await rejection(cancel(-2));
    expect(notCancelable).toBeInstanceOf(TaskNotCancelableError);
    expect((notCancelable as Error).message).toContain("TASK_STATE_WORKING");
  });

  test("snapshot: {} and another client's task are undefined", async () => {
    const journal = new TaskJournal(new FakeRedis().answer("snapshot", [], snapshotReply).asRedis(), keys, settings);
    expect(await journal.snapshot("client-7", "T1")).toBeUndefined();
    expect(await journal.snapshot("client-8", "T1")).toBeUndefined();
  });
});

describe("RunLedger maps script codes to results", () => {
  const claimInput = { shard: 0, taskId: "T1", entryId: "1-0", fence: 2, clientId: "c", profile: "echo" } as const;

  test("claim: the tuple becomes a Claim; -1..-4 are orphan, finished, stale, leased; 0 is deferred", async () => {
    const claim = (reply: Reply) =>
      new RunLedger(new FakeRedis().answer("claim", reply).asRedis(), keys).claim(0, "T1", "1-0", "a1", 100, 3);
    expect(await claim([2, 4, 1, 1, "TASK_STATE_WORKING", "c", "echo"])).toEqual({
      shard: 0,
      taskId: "T1",
      entryId: "1-0",
      fence: 2,
      tries: 4,
      exhausted: true,
      cancelRequested: true,
      state: "TASK_STATE_WORKING",
      clientId: "c",
      profile: "echo",
    });
    expect(await Promise.all([-1, -2, -3, -4, 0].map(claim))).toEqual([
      "orphan",
      "finished",
      "stale",
      "leased",
      "deferred",
    ]);
  });

  test("transition: a revision is ok; -1..-5 are missing, stale, illegal, interrupted-limit, output-limit", async () => {
    const transition = (reply: Reply) =>
      new RunLedger(new FakeRedis().answer("transition", reply).asRedis(), keys).transition({
        claim: claimInput,
        kind: "status",
        state: "TASK_STATE_WORKING",
        event: { statusUpdate: { taskId: "T1", contextId: "C", status: { state: "TASK_STATE_WORKING" } } },
        retentionSeconds: 1,
        journalRetentionSeconds: 1,
      });
    expect(await transition(5)).toEqual({ ok: true, rev: 5 });
    expect(await Promise.all([-1, -2, -3, -4, -5].map(transition))).toEqual([
      { ok: false, reason: "missing" },
      { ok: false, reason: "stale" },
      { ok: false, reason: "illegal" },
      { ok: false, reason: "interrupted-limit" },
      { ok: false, reason: "output-limit" },
    ]);
  });

  test("renew: 0 ok, 1 cancel, -1 lost; release: an entry id is true, -1 false", async () => {
    const claim = {
      ...claimInput,
      tries: 1,
      exhausted: false,
      cancelRequested: false,
      state: "TASK_STATE_WORKING" as const,
    };
    const renew = (reply: Reply) =>
      new RunLedger(new FakeRedis().answer("renew", reply).asRedis(), keys).renew(claim, 100, "a1");
    expect(await Promise.all([0, 1, -1].map(renew))).toEqual(["ok", "cancel", "lost"]);
    const release = (reply: Reply) =>
      new RunLedger(new FakeRedis().answer("release", reply).asRedis(), keys).release(claim);
    expect(await Promise.all(["9-0", -1].map(release))).toEqual([true, false]);
  });
});

describe("every script call stays in one shard", () => {
  test("accept, resume, cancel, snapshot, claim, transition and renew pass their keys in the client's shard", async () => {
    const fake = Object.assign(new FakeRedis(), { isCluster: true })
      .answer("accept", [1, "T1"])
      .answer("resume", [1, "T1", 3])
      .answer("snapshot", snapshotReply)
      .answer("cancel", [1, 3])
      .answer("claim", -2)
      .answer("transition", 3)
      .answer("renew", 0);
    const journal = new TaskJournal(fake.asRedis(), keys, settings);
    const ledger = new RunLedger(fake.asRedis(), keys);
    await journal.accept(acceptInput);
    await journal.resume({ ...acceptInput, taskId: "T1" });
    await journal.cancel("client-7", "T1", "echo", { retentionSeconds: 1, journalRetentionSeconds: 1 });
    const claim = { shard, taskId: "T1", entryId: "1-0", fence: 1, clientId: "client-7", profile: "echo" };
    await ledger.claim(shard, "T1", "1-0", "a1", 100, 3);
    await ledger.transition({
      claim,
      kind: "status",
      state: "TASK_STATE_WORKING",
      event: { statusUpdate: { taskId: "T1", contextId: "C", status: { state: "TASK_STATE_WORKING" } } },
      retentionSeconds: 1,
      journalRetentionSeconds: 1,
    });
    await ledger.renew(
      { ...claim, tries: 1, exhausted: false, cancelRequested: false, state: "TASK_STATE_WORKING" },
      100,
      "a1",
    );
    expect(fake.calls.map((c) => c.script)).toEqual([
      "accept",
      "resume",
      "snapshot",
      "cancel",
      "claim",
      "transition",
      "renew",
    ]);
    for (const call of fake.calls) {
      for (const key of call.keys) {
        expect(key.startsWith(`p:{${shard}}:`)).toBe(true);
        expect(key).not.toContain("undefined");
      }
    }
  });

  test("on one node, a step also names the installation's waiting set, for the leases a blocking accept took", async () => {
    const fake = new FakeRedis().answer("transition", 3);
    const claim = { shard, taskId: "T1", entryId: "1-0", fence: 1, clientId: "client-7", profile: "echo" };
    await new RunLedger(fake.asRedis(), keys).transition({
      claim,
      kind: "status",
      state: "TASK_STATE_COMPLETED",
      event: { statusUpdate: { taskId: "T1", contextId: "C", status: { state: "TASK_STATE_COMPLETED" } } },
      retentionSeconds: 1,
      journalRetentionSeconds: 1,
    });
    const [call] = fake.calls;
    expect(call?.keys.filter((key) => !key.startsWith(`p:{${shard}}:`))).toEqual([keys.waiting()]);
    expect(call?.keys.at(-2)).toBe(keys.clientWaiting(shard, "client-7"));
  });
});
