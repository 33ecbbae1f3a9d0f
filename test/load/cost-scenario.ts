// Scenario 5, accept cost in Redis: commands and bytes per accepted task (INFO stats and commandstats diffed around N
// accepts through the gateway), per finished run, and Redis memory per finished task (MEMORY USAGE over its keys) right
// after completion, after the journal's retention and after the task's; against the SDK server's heap per task.
import type { Redis } from "ioredis";
import { DueTasks } from "../../src/journal/index.ts";
import { type BenchContext, pick } from "./context.ts";
import { runHttpLoad } from "./http-load.ts";
import { Installation, sendMessageBody } from "./installation.ts";
import { type Child, waitFor } from "./processes.ts";
import { bytes, fmt, type Section } from "./results.ts";
import { startSdkServer } from "./sdk-peer.ts";

export const COST_TITLE = "Accept cost in Redis, and memory per finished task";
export const COST_TARGETS = ["Redis memory per finished task (task, run, dedup, journal, indices) ≤ 2 KB"];

/** The default: the terminal step deletes the journal (no stream follows these tasks). */
const JOURNAL_RETENTION_SECONDS = 0;
const RETENTION_SECONDS = 20;

interface Stats {
  commands: number;
  inBytes: number;
  outBytes: number;
  calls: Map<string, number>;
  usedMemory: number;
}

async function stats(redis: Redis): Promise<Stats> {
  const info = await redis.info("all");
  const num = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, "m").exec(info)?.[1] ?? Number.NaN);
  const calls = new Map<string, number>();
  for (const match of info.matchAll(/^cmdstat_([a-z|_-]+):calls=(\d+)/gm)) calls.set(match[1] ?? "", Number(match[2]));
  return {
    commands: num("total_commands_processed"),
    inBytes: num("total_net_input_bytes"),
    outBytes: num("total_net_output_bytes"),
    calls,
    usedMemory: num("used_memory"),
  };
}

interface Cost {
  commandsPer: number;
  inPer: number;
  outPer: number;
  /** Commands Redis executed per item, including those run inside scripts, e.g. "evalsha 2, hset 2, …". */
  breakdown: string;
}

function cost(before: Stats, after: Stats, count: number): Cost {
  const rows: [string, number][] = [];
  for (const [name, calls] of after.calls) {
    const delta = calls - (before.calls.get(name) ?? 0);
    if (delta > 0 && name !== "info") rows.push([name, delta / count]);
  }
  rows.sort((a, b) => b[1] - a[1]);
  return {
    commandsPer: (after.commands - before.commands) / count,
    inPer: (after.inBytes - before.inBytes) / count,
    outPer: (after.outBytes - before.outBytes) / count,
    breakdown: rows
      .filter(([, per]) => per >= 0.05)
      .map(([name, per]) => `${name} ${per.toFixed(per >= 10 ? 0 : 1)}`)
      .join(", "),
  };
}

/** Mean MEMORY USAGE (SAMPLES 0: exact) of each per-task key kind, over the given tasks; missing keys count 0. */
interface TaskKeysOf {
  taskIds: string[];
  messageIds: string[];
  contextIds: string[];
}

async function memoryPerTask(inst: Installation, of: TaskKeysOf): Promise<Record<string, number>> {
  const { taskIds, messageIds, contextIds } = of;
  const { keys } = inst;
  const kinds: Record<string, (i: number) => string> = {
    task: (i) => keys.task(0, taskIds[i] ?? ""),
    run: (i) => keys.run(0, taskIds[i] ?? ""),
    journal: (i) => keys.journal(0, taskIds[i] ?? ""),
    dedup: (i) => keys.dedup(0, inst.clientId, "echo", messageIds[i] ?? ""),
    // each task has a context of its own here: the context index is one small sorted set per task
    context: (i) => keys.contextTasks(0, inst.clientId, "echo", contextIds[i] ?? ""),
  };
  const out: Record<string, number> = {};
  for (const [kind, key] of Object.entries(kinds)) {
    const pipeline = inst.redis.pipeline();
    // EXISTS first: MEMORY USAGE alone would still count a key whose TTL passed but that Redis has not reclaimed yet
    for (let i = 0; i < taskIds.length; i++) pipeline.exists(key(i)).call("MEMORY", "USAGE", key(i), "SAMPLES", "0");
    const replies = (await pipeline.exec()) ?? [];
    const sizes = replies.filter((_, index) => index % 2 === 1);
    out[kind] = sizes.reduce((sum, [, value]) => sum + Number(value ?? 0), 0) / taskIds.length;
  }
  const index = Number(
    (await inst.redis.call("MEMORY", "USAGE", keys.clientTasks(0, inst.clientId, "echo"), "SAMPLES", "0")) ?? 0,
  );
  out.index = index / taskIds.length;
  // every task here ends COMPLETED: the state index (ListTasks with a status filter) holds one member per task
  const completed = keys.stateTasks(0, inst.clientId, "echo", "TASK_STATE_COMPLETED");
  out.state = Number((await inst.redis.call("MEMORY", "USAGE", completed, "SAMPLES", "0")) ?? 0) / taskIds.length;
  // the shard's deletion schedule holds one member per finished task until it is deleted
  const schedule = Number((await inst.redis.call("MEMORY", "USAGE", keys.purge(0), "SAMPLES", "0")) ?? 0);
  out.schedule = schedule / taskIds.length;
  return out;
}

/** Until `gone` holds, runs the deletions that are due, as a worker's retention pass does (the actors are stopped). */
async function deleteDue(inst: Installation, gone: () => Promise<boolean>, timeoutMs: number, what: string) {
  const due = new DueTasks(inst.redis, inst.keys);
  await waitFor(
    async () => {
      await due.purge(0, 1000);
      return (await gone()) ? true : undefined;
    },
    timeoutMs,
    what,
    200,
  );
}

const total = (memory: Record<string, number>) => Object.values(memory).reduce((sum, value) => sum + value, 0);

async function sdkHeapPerTask(count: number): Promise<{ perTask: number; rssPerTask: number }> {
  const { child, port } = await startSdkServer("node", "echo");
  try {
    const read = async () =>
      (await (await fetch(`http://127.0.0.1:${port}/__memory`)).json()) as { heapUsed: number; rss: number };
    await runHttpLoad({
      port,
      path: "/",
      concurrency: 8,
      maxRequests: 200,
      maxSeconds: 10,
      warmupRequests: 0,
      headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
      body: (seq) => sendMessageBody(seq, "hello", false, "sdk-warm"),
    });
    const before = await read();
    await runHttpLoad({
      port,
      path: "/",
      concurrency: 8,
      maxRequests: count,
      maxSeconds: 60,
      warmupRequests: 0,
      headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
      body: (seq) => sendMessageBody(seq, "hello", false, "sdk-cost"),
    });
    const after = await read();
    return { perTask: (after.heapUsed - before.heapUsed) / count, rssPerTask: (after.rss - before.rss) / count };
  } finally {
    await child.stop();
  }
}

export async function costScenario(context: BenchContext): Promise<Section> {
  const count = pick(context, 5_000, 1_000);
  const inst = new Installation(context.redisUrl, {
    profileFields: { retentionSeconds: RETENTION_SECONDS, journalRetentionSeconds: JOURNAL_RETENTION_SECONDS },
  });
  let gateway: Child | undefined;
  let work: Child | undefined;
  try {
    await inst.addClient();
    await inst.seedLiveBeat();
    const started = await inst.gateway();
    gateway = started.child;
    const taskIds: string[] = [];
    const tag = `cost-${Date.now()}`;
    const before = await stats(inst.redis);
    context.log(`cost: ${fmt(count)} accepts through the gateway`);
    await runHttpLoad({
      port: started.port,
      path: "/a2a/echo",
      concurrency: 16,
      maxRequests: count,
      maxSeconds: 120,
      warmupRequests: 0,
      headers: { "Content-Type": "application/json", "A2A-Version": "1.0", Authorization: `Bearer ${inst.apiKey}` },
      body: (seq) => sendMessageBody(seq, "hello", true, tag),
      check: (answer) => {
        const id = /"task":\{"id":"([^"]+)"/.exec(answer.body)?.[1];
        if (id) taskIds.push(id);
        return answer.status === 200 && id !== undefined;
      },
    });
    const accepted = await stats(inst.redis);
    const acceptCost = cost(before, accepted, count);
    context.log("cost: running them (work --actors 1, echo)");
    work = await inst.work(1);
    await waitFor(async () => ((await inst.active()) === 0 ? true : undefined), 120_000, "every task to finish", 50);
    const finished = await stats(inst.redis);
    const runCost = cost(accepted, finished, count);
    await work.stop(30_000);
    work = undefined;
    await gateway.stop();
    gateway = undefined;
    const pairs = await pairMessageIds(inst, taskIds);
    const atFinish = await memoryPerTask(inst, pairs);
    const journalKeys = pairs.taskIds.map((id) => inst.keys.journal(0, id));
    await deleteDue(inst, async () => (await inst.redis.exists(...journalKeys)) === 0, 40_000, "journal retention");
    const afterJournal = await memoryPerTask(inst, pairs);
    const taskKeys = pairs.taskIds.map((id) => inst.keys.task(0, id));
    await deleteDue(inst, async () => (await inst.redis.exists(...taskKeys)) === 0, 30_000, "retention");
    const afterRetention = await memoryPerTask(inst, pairs);
    context.log("cost: SDK heap per task");
    const sdk = await sdkHeapPerTask(count);
    const perTask = total(atFinish);
    const parts = (memory: Record<string, number>) =>
      Object.entries(memory)
        .map(([kind, value]) => `${kind} ${bytes(value)}`)
        .join(", ");
    return {
      id: "cost",
      title: COST_TITLE,
      setup: [
        `${fmt(count)} SendMessage (returnImmediately, text "hello", 16 clients) through one gateway with a seeded liveness record and no actor, INFO stats and commandstats diffed around them; then \`work --actors 1\` runs them all (echo: WORKING, artifact, COMPLETED) and the stats are diffed again.`,
        `Memory: MEMORY USAGE … SAMPLES 0 of each task's keys (task hash, run hash, journal stream, dedup record, the context's task index) averaged over the ${fmt(count)} tasks, plus the client's task index, its index of COMPLETED tasks and the shard's deletion schedule (ZSETs) divided by the task count; deletions are run in process as a worker's retention pass runs them; profile retention ${RETENTION_SECONDS} s and journal retention ${JOURNAL_RETENTION_SECONDS} s so both pass within the run; redis.dedupSeconds at its default (86,400 s).`,
        "Peer: the SDK server on Node (--expose-gc) with the echo executor: heapUsed after a forced GC, before and after the same number of blocking echo tasks, divided by the count (its InMemoryTaskStore never frees a task).",
      ],
      rows: [],
      targets: [
        {
          text: COST_TARGETS[0] ?? "",
          measured: `${bytes(perTask)} right after completion (${parts(atFinish)}); SDK heap: ${bytes(sdk.perTask)} per task`,
          met: perTask <= 2048,
          ...(perTask > 2048
            ? {
                why: `${bytes(perTask - 2048)} over: the task hash stores the status, history and artifacts as JSON and the journal stream keeps every event after the accept (WORKING, the artifact, COMPLETED) until journalRetentionSeconds; after the journal's retention it is ${bytes(total(afterJournal))}${total(afterJournal) <= 2048 ? ", within the target" : ""}.`,
              }
            : {}),
        },
      ],
      figures: [
        ["Redis commands per accept (round trips from the gateway)", acceptCost.commandsPer.toFixed(2)],
        ["commands Redis ran per accept, scripts' own calls included (commandstats)", acceptCost.breakdown],
        [
          "bytes per accept, gateway → Redis / Redis → gateway",
          `${bytes(acceptCost.inPer)} / ${bytes(acceptCost.outPer)}`,
        ],
        ["Redis commands per finished run (actor side)", runCost.commandsPer.toFixed(2)],
        ["commands Redis ran per run (commandstats)", runCost.breakdown],
        [
          "bytes per run, actors → Redis / Redis → actors (incl. pub/sub)",
          `${bytes(runCost.inPer)} / ${bytes(runCost.outPer)}`,
        ],
        ["memory per finished task, right after completion", `${bytes(perTask)} (${parts(atFinish)})`],
        [
          `… after the journal retention (${JOURNAL_RETENTION_SECONDS} s)`,
          `${bytes(total(afterJournal))} (${parts(afterJournal)})`,
        ],
        [
          `… after the task retention (${RETENTION_SECONDS} s)`,
          `${bytes(total(afterRetention))} (${parts(afterRetention)})`,
        ],
        [
          "used_memory growth per queued task (the accepts, before any run; whole server)",
          bytes((accepted.usedMemory - before.usedMemory) / count),
        ],
        [
          "used_memory growth per task (accepted → finished, whole server)",
          bytes((finished.usedMemory - before.usedMemory) / count),
        ],
        [
          "@a2a-js/sdk on Node: heap growth per finished task (InMemoryTaskStore)",
          `${bytes(sdk.perTask)} (RSS ${bytes(sdk.rssPerTask)})`,
        ],
      ],
      notes: [
        "The retention pass deletes a finished task with its index entries (the client's, its context's and its state's task lists) after the profile's retentionSeconds; the dedup record lives redis.dedupSeconds.",
      ],
    };
  } finally {
    await work?.stop(30_000);
    await gateway?.stop();
    await inst.close();
  }
}

/** The messageId and context of each task, read from its stored fields (answers arrive out of request order). */
async function pairMessageIds(inst: Installation, taskIds: string[]): Promise<TaskKeysOf> {
  const pipeline = inst.redis.pipeline();
  for (const id of taskIds) pipeline.hmget(inst.keys.task(0, id), "hist", "ctx");
  const replies = (await pipeline.exec()) ?? [];
  const fields = replies.map(([, value]) => (value ?? []) as (string | null)[]);
  const messageIds = fields.map(([hist]) => /"messageId":"([^"]+)"/.exec(String(hist ?? ""))?.[1] ?? "");
  return { taskIds, messageIds, contextIds: fields.map(([, ctx]) => ctx ?? "") };
}
