// Property: the snapshot and the journal agree. For seeded random sequences of transitions, with snapshots (and heads:
// revision, state and cursor without the content) taken between writes or racing them on another connection, the
// entries after a snapshot's cursor are exactly the revisions after its revision, and the snapshot equals the journal
// folded up to its cursor (the journal holds the revisions after the first: the accepted task is the snapshot's
// starting point, and a snapshot at revision 1 has the cursor 0-0); the same holds for each head.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type Claim, type Snapshot, type TaskHead, TaskJournal } from "../../../src/journal/index.ts";
import { type StreamResponse, type TaskState, TERMINAL_STATES } from "../../../src/protocol/index.ts";
import { type JournalFixture, journalFixture, userMessage } from "../../support/journal.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import { type AcceptedTask, acceptTask, claimTask, liveClient, move, PROFILE, RETENTION } from "./helpers.ts";

const RUNS = 200;

let server: TestRedis;
let f: JournalFixture;
let reader: TaskJournal;
let clientId: string;
beforeAll(async () => {
  server = await startRedis();
  f = journalFixture(server);
  // snapshots go over their own connection, so they really interleave with the writes inside Redis
  reader = new TaskJournal(server.client(), f.keys, { livenessSeconds: 120, dedupSeconds: 3600, retryAfterSeconds: 5 });
  clientId = await liveClient(f);
});
afterAll(async () => {
  await server.stop();
});

/** mulberry32: a small seeded PRNG, so a failing seed can be replayed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Op = "progress" | "artifact" | "interrupt" | "terminal";

interface Run {
  task: AcceptedTask;
  claim: Claim;
  artifacts: { artifactId: string; parts: { text: string }[] }[];
}

async function apply(run: Run, op: Op, random: () => number): Promise<void> {
  const { task } = run;
  if (op === "progress") {
    expect((await move(f, run.claim, task, "TASK_STATE_WORKING")).ok).toBe(true);
  } else if (op === "artifact") {
    const artifact = { artifactId: `a${run.artifacts.length}`, parts: [{ text: `chunk ${run.artifacts.length}` }] };
    run.artifacts = [...run.artifacts, artifact];
    const result = await f.ledger.transition({
      claim: run.claim,
      kind: "artifact",
      state: "TASK_STATE_WORKING",
      event: { artifactUpdate: { taskId: task.taskId, contextId: task.contextId, artifact } },
      artifacts: run.artifacts,
      ...RETENTION,
    });
    expect(result.ok).toBe(true);
  } else if (op === "interrupt") {
    const state: TaskState = random() < 0.5 ? "TASK_STATE_INPUT_REQUIRED" : "TASK_STATE_AUTH_REQUIRED";
    expect((await move(f, run.claim, task, state)).ok).toBe(true);
    const message = userMessage("more input");
    await f.journal.resume({ clientId, profile: PROFILE, profileQuota: 0, taskId: task.taskId, message });
    run.claim = await claimTask(f, task);
  } else {
    const terminal = TERMINAL_STATES[Math.floor(random() * TERMINAL_STATES.length)] ?? "TASK_STATE_COMPLETED";
    expect((await move(f, run.claim, task, terminal)).ok).toBe(true);
  }
}

/** State and artifact ids obtained by replaying journal events in order. */
function fold(events: StreamResponse[]): { state: TaskState; artifactIds: string[] } {
  let state: TaskState = "TASK_STATE_SUBMITTED";
  const artifactIds: string[] = [];
  for (const event of events) {
    if ("task" in event && event.task) state = event.task.status.state;
    if ("statusUpdate" in event && event.statusUpdate) state = event.statusUpdate.status.state;
    if ("artifactUpdate" in event && event.artifactUpdate) artifactIds.push(event.artifactUpdate.artifact.artifactId);
  }
  return { state, artifactIds };
}

async function checkAgreement(seed: number, snap: Snapshot | undefined, task: AcceptedTask): Promise<void> {
  if (!snap) throw new Error(`seed ${seed}: no snapshot`);
  await checkHead(seed, { rev: snap.record.rev, state: snap.record.state, cursor: snap.cursor }, task);
  const upTo = snap.cursor === "0-0" ? [] : await f.redis.xrange(f.keys.journal(0, task.taskId), "-", snap.cursor);
  const replayed = fold(upTo.map(([, fields]) => JSON.parse(fields[3] ?? "{}") as StreamResponse));
  expect({ seed, artifactIds: snap.record.artifacts.map((a) => a.artifactId) }).toEqual({
    seed,
    artifactIds: replayed.artifactIds,
  });
}

/** A head (or a snapshot's) agrees with the journal: later entries are the later revisions; state as folded. */
async function checkHead(seed: number, head: TaskHead, task: AcceptedTask): Promise<void> {
  const finalRev = Number(await f.redis.hget(f.keys.task(0, task.taskId), "rev"));
  const after = await f.journal.readJournal(clientId, task.taskId, head.cursor);
  const expected = Array.from({ length: finalRev - head.rev }, (_, i) => head.rev + 1 + i);
  expect({ seed, revs: after.map((e) => e.rev) }).toEqual({ seed, revs: expected });
  const upTo = head.cursor === "0-0" ? [] : await f.redis.xrange(f.keys.journal(0, task.taskId), "-", head.cursor);
  // the entry at the cursor is the head's revision; revision 1 (the task as accepted) is no journal entry
  const atCursor = upTo.at(-1);
  expect({ seed, cursor: atCursor?.[0] ?? "0-0", rev: atCursor ? Number(atCursor[1][1]) : 1 }).toEqual({
    seed,
    cursor: head.cursor,
    rev: head.rev,
  });
  const replayed = fold(upTo.map(([, fields]) => JSON.parse(fields[3] ?? "{}") as StreamResponse));
  expect({ seed, state: head.state }).toEqual({ seed, state: replayed.state });
}

test(`snapshot and journal agree over ${RUNS} seeded interleavings`, async () => {
  const ops: Op[] = ["progress", "artifact", "interrupt"];
  let concurrent = 0;
  for (let seed = 1; seed <= RUNS; seed++) {
    const random = prng(seed);
    const task = await acceptTask(f, clientId);
    const run: Run = { task, claim: await claimTask(f, task), artifacts: [] };
    const plan: Op[] = Array.from(
      { length: 2 + Math.floor(random() * 10) },
      () => ops[Math.floor(random() * 3)] ?? "progress",
    );
    if (random() < 0.6) plan.push("terminal");
    const points = [Math.floor(random() * (plan.length + 1)), Math.floor(random() * (plan.length + 1))];
    const snaps: Snapshot[] = [];
    const heads: TaskHead[] = [];
    const take = async () => {
      const [snap, head] = await Promise.all([
        reader.snapshot(clientId, task.taskId),
        reader.head(clientId, task.taskId),
      ]);
      if (snap) snaps.push(snap);
      if (head) heads.push(head);
    };
    for (let i = 0; i <= plan.length; i++) {
      const op = plan[i];
      const snapshotsHere = points.filter((p) => p === i).length;
      if (op === undefined) {
        for (let s = 0; s < snapshotsHere; s++) await take();
      } else if (snapshotsHere > 0 && random() < 0.5) {
        concurrent += 1;
        await Promise.all([apply(run, op, random), ...Array.from({ length: snapshotsHere }, take)]);
      } else {
        for (let s = 0; s < snapshotsHere; s++) await take();
        await apply(run, op, random);
      }
    }
    expect(snaps.length).toBe(2);
    expect(heads.length).toBe(2);
    const revs = (await f.journal.readJournal(clientId, task.taskId, "0-0")).map((e) => e.rev);
    expect({ seed, revs }).toEqual({ seed, revs: Array.from({ length: revs.length }, (_, i) => i + 2) });
    for (const snap of snaps) await checkAgreement(seed, snap, task);
    for (const head of heads) await checkHead(seed, head, task);
  }
  expect(concurrent).toBeGreaterThan(RUNS / 5);
});

test("a head is undefined for a task that does not exist and for another client's task", async () => {
  const task = await acceptTask(f, clientId);
  expect(await reader.head(clientId, task.taskId)).toEqual({
    rev: 1,
    state: "TASK_STATE_SUBMITTED",
    cursor: expect.stringMatching(/^\d+-\d+$/),
  });
  expect(await reader.head(clientId, "no-such-task")).toBeUndefined();
  const other = await liveClient(f);
  expect(await reader.head(other, task.taskId)).toBeUndefined();
});
