// The accept script's own ceiling: `redis-benchmark` running EVALSHA of accept-15.lua (fresh task and dedup keys per
// call via __rand_int__, a live beat and a client record seeded), and TaskJournal.accept in-process without HTTP.
// Standalone: `bun test/load/accept-script.ts [--quick]` against a redis-server of its own.
import { spawnSync } from "node:child_process";
import { Redis } from "ioredis";
import { ClientRegistry, KeySpace, RunLedger, scriptSource, TaskJournal } from "../../src/journal/index.ts";
import { ACCEPT } from "../../src/journal/lua/accept.ts";
import { startRedis } from "../support/redis.ts";
import { benchPrefix } from "./installation.ts";
import { rateOnly, type Summary, summarize } from "./stats.ts";

export interface CeilingResult {
  summary: Summary;
  /** The redis-benchmark command line, for the report. */
  command: string;
  /** Tasks the run created (queue entries added), a check that the script really accepted. */
  created: number;
}

/** A client record, the shard's queue group and a live beat under `keys`; the client's id. */
export async function seed(admin: Redis, keys: KeySpace): Promise<string> {
  const { record } = await new ClientRegistry(admin, keys).add({ name: "ceiling" });
  const ledger = new RunLedger(admin, keys);
  await ledger.ensureGroup(0);
  await ledger.beat(0, 3600);
  return record.id;
}

/** redis-benchmark's CSV row: "test",rps,avg,min,p50,p95,p99,max (the test name may itself hold commas). */
function parseCsv(stdout: string): { rps: number; p50: number; p95: number; p99: number; max: number } {
  const cells = (stdout.trim().split("\n").at(-1) ?? "").split(",").map((cell) => Number(cell.replaceAll('"', "")));
  const at = (offset: number) => cells.at(offset) ?? Number.NaN;
  return { rps: at(-7), p50: at(-4), p95: at(-3), p99: at(-2), max: at(-1) };
}

/** `redis-benchmark -c clients -n requests` of EVALSHA accept, each call a new task; latencies from its own CSV. */
export async function acceptScriptCeiling(url: string, clients: number, requests: number): Promise<CeilingResult> {
  const admin = new Redis(url);
  try {
    const keys = new KeySpace(benchPrefix(), 1);
    const clientId = await seed(admin, keys);
    const sha = String(await admin.script("LOAD", scriptSource("accept")));
    const id = "T__rand_int__";
    const status = { state: "TASK_STATE_SUBMITTED", timestamp: new Date().toISOString() };
    const message = { messageId: "m", role: "ROLE_USER", parts: [{ text: "hello" }], taskId: id, contextId: "C" };
    const call = ACCEPT.argv(
      {
        live: keys.live(0),
        client: keys.client(0, clientId),
        clientActive: keys.clientActive(0, clientId),
        profileActive: keys.profileActive(0, "echo"),
        dedup: keys.dedup(0, clientId, "echo", "m__rand_int__"),
        task: keys.task(0, id),
        run: keys.run(0, id),
        clientTasks: keys.clientTasks(0, clientId, "echo"),
        queue: keys.queue(0),
        pushConfigs: keys.pushConfigs(0, id),
        clientInterrupted: keys.clientInterrupted(0, clientId),
        bytes: keys.bytes(0),
        contextTasks: keys.contextTasks(0, clientId, "echo", "C"),
        // a returnImmediately accept takes no waiting leases: the client's set stands for both, untouched
        clientWaiting: keys.clientWaiting(0, clientId),
        waiting: keys.clientWaiting(0, clientId),
      },
      {
        livenessSeconds: 3600,
        profileQuota: 0,
        contentHash: "hash",
        taskId: id,
        runId: "R__rand_int__",
        contextId: "C",
        clientId,
        profile: "echo",
        status: JSON.stringify(status),
        message: JSON.stringify(message),
        nowMs: Date.now(),
        dedupSeconds: 86_400,
        metadata: "",
        pushConfigId: "",
        pushConfig: "",
        clientMaxStoredBytes: 0,
        profileMaxStoredBytes: 0,
        clientMaxInterruptedTasks: 0,
        traceContext: "",
        waitingMember: "",
        waitingTtlMs: 0,
        clientMaxWaiting: 0,
        maxWaiting: 0,
      },
    );
    const args = ["EVALSHA", sha, String(ACCEPT.keys.length), ...call.map(String)];
    const { hostname, port } = new URL(url);
    const options = ["-h", hostname, "-p", port, "-c", String(clients), "-n", String(requests), "-r", "100000000000"];
    const before = await admin.xlen(keys.queue(0));
    const run = spawnSync("redis-benchmark", [...options, "--csv", ...args], { encoding: "utf8", timeout: 300_000 });
    if (run.status !== 0) throw new Error(`redis-benchmark failed: ${run.stderr || run.error}`);
    const row = parseCsv(run.stdout);
    const created = (await admin.xlen(keys.queue(0))) - before;
    const summary = {
      ...rateOnly(requests, requests / row.rps),
      p50: row.p50,
      p90: Number.NaN,
      p99: row.p99,
      p999: Number.NaN,
      max: row.max,
    };
    const shown = ["redis-benchmark", ...options, "EVALSHA <accept-15.lua sha> 15 <keys…> <args…>"].join(" ");
    return { summary, command: shown, created };
  } finally {
    admin.disconnect();
  }
}

/** `redis-benchmark -t set` on the same server: what one plain command costs here, for scale. */
export function setBaseline(url: string, clients: number, requests: number): number {
  const { hostname, port } = new URL(url);
  const args = ["-h", hostname, "-p", port, "-c", String(clients), "-n", String(requests), "-t", "set", "--csv"];
  const run = spawnSync("redis-benchmark", args, { encoding: "utf8", timeout: 120_000 });
  return parseCsv(run.stdout).rps;
}

/** TaskJournal.accept in this process over `callers` ioredis connections (no HTTP, no gateway). */
export async function journalAccept(url: string, callers: number, maxAccepts: number, maxSeconds: number) {
  const admin = new Redis(url);
  const keys = new KeySpace(benchPrefix(), 1);
  const clientId = await seed(admin, keys);
  const connections = Array.from({ length: callers }, () => new Redis(url));
  const settings = { livenessSeconds: 3600, dedupSeconds: 86_400, retryAfterSeconds: 5 };
  const latencies: number[] = [];
  let issued = 0;
  const started = performance.now();
  const deadline = started + maxSeconds * 1000;
  try {
    await Promise.all(
      connections.map(async (redis, caller) => {
        const journal = new TaskJournal(redis, keys, settings);
        while (issued < maxAccepts && performance.now() < deadline) {
          issued += 1;
          const message = { messageId: `c${caller}-${issued}`, role: "ROLE_USER" as const, parts: [{ text: "hello" }] };
          const t0 = performance.now();
          await journal.accept({ clientId, profile: "echo", profileQuota: 0, message });
          latencies.push(performance.now() - t0);
        }
      }),
    );
    return summarize(latencies, (performance.now() - started) / 1000);
  } finally {
    for (const redis of connections) redis.disconnect();
    admin.disconnect();
  }
}

if (import.meta.main) {
  const quick = process.argv.includes("--quick");
  const server = await startRedis();
  if (!server.owned) {
    await server.stop();
    throw new Error("REDIS_URL is set: this driver writes many tasks and runs only on a redis-server of its own");
  }
  try {
    const inProcess = await journalAccept(server.url, 64, quick ? 10_000 : 50_000, quick ? 10 : 30);
    console.log(
      `TaskJournal.accept, 64 callers: ${Math.round(inProcess.perSecond)}/s, p50 ${inProcess.p50.toFixed(2)} ms`,
    );
    const ceiling = await acceptScriptCeiling(server.url, 64, quick ? 50_000 : 200_000);
    console.log(`${ceiling.command}\n  ${Math.round(ceiling.summary.perSecond)}/s, p50 ${ceiling.summary.p50} ms`);
    console.log(`redis-benchmark SET: ${Math.round(setBaseline(server.url, 64, 100_000))}/s`);
  } finally {
    await server.stop();
  }
}
