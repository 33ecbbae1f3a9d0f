// Redis's own time in each script of a no-op task's life: the accept, the claim and the run's end (the one step of a
// handler that returns at once: WORKING, COMPLETED, the queue entry acknowledged), each called `count` times through
// the journal's own classes on a redis-server of its own, with INFO commandstats reset before each phase. For each
// script: Redis's time in it per call, the part its commands took themselves, and the rest (the Lua code between the
// commands, and passing arguments and replies between Lua and Redis); and, for scale, an empty script with as many
// keys and arguments. Standalone: `bun test/load/script-cost.ts [--quick]`.
import { Redis } from "ioredis";
import { type Claim, KeySpace, QUEUE_GROUP, RunLedger, TaskJournal } from "../../src/journal/index.ts";
import { CLAIM } from "../../src/journal/lua/claim.ts";
import { TRANSITION } from "../../src/journal/lua/transition.ts";
import type { TaskStatus } from "../../src/protocol/index.ts";
import { pool } from "../support/pool.ts";
import { startRedis } from "../support/redis.ts";
import { seed } from "./accept-script.ts";
import { benchPrefix } from "./installation.ts";

export interface ScriptCost {
  script: string;
  /** Redis's time in the script per call (µs, INFO commandstats of EVALSHA and EVAL). */
  scriptUs: number;
  /** The part of it the script's commands took themselves (µs per call). */
  commandsUs: number;
  /** The commands a call ran. */
  commandsPerCall: number;
}

/** The commands the phase ran, per call of its script, from INFO commandstats. */
async function phaseCost(admin: Redis, script: string, calls: number): Promise<ScriptCost> {
  const lines = (await admin.info("commandstats")).split("\r\n");
  let scriptUs = 0;
  let commandsUs = 0;
  let commands = 0;
  for (const line of lines) {
    const match = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line);
    if (!match) continue;
    const [, name = "", count, usec] = match;
    if (name === "evalsha" || name === "eval") scriptUs += Number(usec);
    else if (name !== "config|resetstat" && name !== "info") {
      commandsUs += Number(usec);
      commands += Number(count);
    }
  }
  return {
    script,
    scriptUs: scriptUs / calls,
    commandsUs: commandsUs / calls,
    commandsPerCall: commands / calls,
  };
}

/** Calls in flight at once in every phase. */
const IN_FLIGHT = 50;

/** An empty script's cost with as many keys and arguments as one of ours. */
export interface EmptyScriptCost {
  like: string;
  keys: number;
  args: number;
  scriptUs: number;
}

/** An empty script's cost (µs per call) with `keys` keys and `args` arguments. */
async function emptyScript(admin: Redis, keys: number, args: number, calls: number): Promise<number> {
  const sha = String(await admin.script("LOAD", "return 1"));
  const argv = [
    ...Array.from({ length: keys }, (_, i) => `a2a:{0}:client:01M94K9ASBD64DJKPTBTESNS33:key:${i}`),
    ...Array.from({ length: args }, (_, i) => `argument-${i}`),
  ];
  await admin.config("RESETSTAT");
  await pool(calls, IN_FLIGHT, () => admin.evalsha(sha, keys, ...argv));
  return (await phaseCost(admin, "empty", calls)).scriptUs;
}

export async function scriptCosts(
  url: string,
  count: number,
): Promise<{ costs: ScriptCost[]; empty: EmptyScriptCost[] }> {
  const admin = new Redis(url);
  try {
    const keys = new KeySpace(benchPrefix(), 1);
    const clientId = await seed(admin, keys);
    const ledger = new RunLedger(admin, keys);
    const journal = new TaskJournal(admin, keys, { livenessSeconds: 3600, dedupSeconds: 86_400, retryAfterSeconds: 5 });
    const costs: ScriptCost[] = [];
    const tag = Date.now();

    await admin.config("RESETSTAT");
    await pool(count, IN_FLIGHT, (i) =>
      journal.accept({
        clientId,
        profile: "noop",
        profileQuota: 0,
        message: { messageId: `cost-${tag}-${i}`, role: "ROLE_USER", parts: [{ text: "hello" }] },
      }),
    );
    costs.push(await phaseCost(admin, "accept", count));

    const read = (await admin.xreadgroup(
      "GROUP",
      QUEUE_GROUP,
      "script-cost",
      "COUNT",
      count,
      "STREAMS",
      keys.queue(0),
      ">",
    )) as [string, [string, string[]][]][];
    const entries = (read[0]?.[1] ?? []).map(([id, fields]) => ({
      id,
      task: fields[fields.indexOf("task") + 1] ?? "",
      client: fields[fields.indexOf("client") + 1] ?? "",
    }));
    if (entries.length !== count) throw new Error(`read ${entries.length} queue entries of ${count}`);
    const claims: Claim[] = [];
    await admin.config("RESETSTAT");
    await pool(entries.length, IN_FLIGHT, async (i) => {
      const entry = entries[i];
      if (!entry) return;
      const claim = await ledger.claim(0, entry.task, entry.id, "script-cost", 600_000, 3, entry.client, true);
      if (typeof claim !== "object") throw new Error(`claim refused: ${claim}`);
      claims.push(claim);
    });
    costs.push(await phaseCost(admin, "claim", count));

    await admin.config("RESETSTAT");
    await pool(claims.length, IN_FLIGHT, async (i) => {
      const claim = claims[i];
      if (!claim) return;
      const timestamp = new Date().toISOString();
      const contextId = claim.record?.contextId ?? "";
      const working: TaskStatus = { state: "TASK_STATE_WORKING", timestamp };
      const completed: TaskStatus = { state: "TASK_STATE_COMPLETED", timestamp };
      const result = await ledger.transition({
        claim,
        kind: "status",
        state: "TASK_STATE_COMPLETED",
        status: completed,
        event: { statusUpdate: { taskId: claim.taskId, contextId, status: completed } },
        lead: { status: working, event: { statusUpdate: { taskId: claim.taskId, contextId, status: working } } },
        retentionSeconds: 86_400,
        journalRetentionSeconds: 0,
        ackEntry: claim.entryId,
      });
      if (!result.ok) throw new Error(`the run's end was refused: ${result.reason}`);
    });
    costs.push(await phaseCost(admin, "end", count));

    const empty: EmptyScriptCost[] = [];
    for (const [like, keyCount, argCount] of [
      ["the claim's", CLAIM.keys.length, CLAIM.args.length],
      // a no-op run's end: the declared arguments and its one status event
      ["a no-op run's end", TRANSITION.keys.length, TRANSITION.args.length + 1],
    ] as const) {
      const scriptUs = await emptyScript(admin, keyCount, argCount, count);
      empty.push({ like, keys: keyCount, args: argCount, scriptUs });
    }
    return { costs, empty };
  } finally {
    admin.disconnect();
  }
}

if (import.meta.main) {
  const server = await startRedis();
  if (!server.owned) {
    await server.stop();
    throw new Error("REDIS_URL is set: this driver writes many tasks and runs only on a redis-server of its own");
  }
  try {
    const { costs, empty } = await scriptCosts(server.url, process.argv.includes("--quick") ? 2_000 : 20_000);
    for (const cost of costs) {
      console.log(
        `${cost.script.padEnd(7)} ${cost.scriptUs.toFixed(2)} µs per call in Redis: its ${cost.commandsPerCall.toFixed(1)} commands ${cost.commandsUs.toFixed(2)} µs, the Lua around them ${(cost.scriptUs - cost.commandsUs).toFixed(2)} µs`,
      );
    }
    for (const cost of empty) {
      const shape = `${cost.keys} keys and ${cost.args} arguments (${cost.like})`;
      console.log(`empty script, ${shape}: ${cost.scriptUs.toFixed(2)} µs`);
    }
  } finally {
    await server.stop();
  }
}
