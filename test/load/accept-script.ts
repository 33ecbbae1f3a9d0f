// Load driver (not a test): the accept script's throughput alone, against a redis-server it starts itself.
// Run with `bun test/load/accept-script.ts`; prints accepts/s and latency through TaskJournal.accept (64 callers,
// at most 20,000 accepts or 20 s) and the same script through `redis-benchmark` EVALSHA (the Redis-side ceiling).
import { spawnSync } from "node:child_process";
import { Redis } from "ioredis";
import { ClientRegistry, KeySpace, RunLedger, scriptSource, TaskJournal } from "../../src/journal/index.ts";
import { startRedis, testPrefix } from "../support/redis.ts";

const CALLERS = 64;
const MAX_ACCEPTS = 20_000;
const MAX_SECONDS = 20;
const BENCH_REQUESTS = 50_000;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function driveTaskJournal(url: string): Promise<void> {
  const admin = new Redis(url);
  const keys = new KeySpace(testPrefix(), 1);
  const settings = { livenessSeconds: 3600, dedupSeconds: 3600, retryAfterSeconds: 5 };
  const { record } = await new ClientRegistry(admin, keys).add({ name: "load" });
  const ledger = new RunLedger(admin, keys);
  await ledger.ensureGroup(0);
  await ledger.beat(0, 3600);
  const connections = Array.from({ length: CALLERS }, () => new Redis(url));
  const latencies: number[] = [];
  let issued = 0;
  let created = 0;
  const started = performance.now();
  const deadline = started + MAX_SECONDS * 1000;
  await Promise.all(
    connections.map(async (redis, caller) => {
      const journal = new TaskJournal(redis, keys, settings);
      while (issued < MAX_ACCEPTS && performance.now() < deadline) {
        issued += 1;
        const message = {
          messageId: `load-${caller}-${issued}`,
          role: "ROLE_USER" as const,
          parts: [{ text: "hello" }],
        };
        const t0 = performance.now();
        const accepted = await journal.accept({ clientId: record.id, profile: "echo", profileQuota: 0, message });
        latencies.push(performance.now() - t0);
        if (accepted.created) created += 1;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const queued = await admin.xlen(keys.queue(0));
  console.log(
    `TaskJournal.accept (ioredis, ${CALLERS} callers): ${latencies.length} accepts in ${seconds.toFixed(2)} s = ` +
      `${Math.round(latencies.length / seconds)} accepts/s; p50 ${percentile(latencies, 50).toFixed(2)} ms, ` +
      `p99 ${percentile(latencies, 99).toFixed(2)} ms; ${created} created, ${queued} queued`,
  );
  for (const redis of connections) redis.disconnect();
  admin.disconnect();
}

async function driveRedisBenchmark(url: string): Promise<void> {
  const admin = new Redis(url);
  const keys = new KeySpace(testPrefix(), 1);
  const { record } = await new ClientRegistry(admin, keys).add({ name: "bench" });
  await new RunLedger(admin, keys).beat(0, 3600);
  const sha = String(await admin.script("LOAD", scriptSource("accept")));
  const id = "T__rand_int__";
  const status = JSON.stringify({ state: "TASK_STATE_SUBMITTED", timestamp: new Date().toISOString() });
  const message = { messageId: "m", role: "ROLE_USER", parts: [{ text: "hello" }], taskId: id, contextId: "C" };
  const task = { id, contextId: "C", status: JSON.parse(status), history: [message] };
  const args = [
    "EVALSHA",
    sha,
    "10",
    keys.live(0),
    keys.client(0, record.id),
    keys.clientActive(0, record.id),
    keys.profileActive(0, "echo"),
    keys.dedup(0, record.id, "m__rand_int__"),
    keys.task(0, id),
    keys.run(0, id),
    keys.journal(0, id),
    keys.clientTasks(0, record.id),
    keys.queue(0),
    "3600",
    "0",
    "hash",
    id,
    "R__rand_int__",
    "C",
    record.id,
    "echo",
    status,
    JSON.stringify([message]),
    JSON.stringify({ task }),
    String(Date.now()),
    "3600",
    "",
  ];
  const port = new URL(url).port;
  const host = new URL(url).hostname;
  const queuedBefore = await admin.xlen(keys.queue(0));
  const run = spawnSync(
    "redis-benchmark",
    [
      "-h",
      host,
      "-p",
      port,
      "-c",
      String(CALLERS),
      "-n",
      String(BENCH_REQUESTS),
      "-r",
      "100000000000",
      "--csv",
      ...args,
    ],
    { encoding: "utf8", timeout: 120_000 },
  );
  if (run.status !== 0) throw new Error(`redis-benchmark failed: ${run.stderr || run.error}`);
  // the last CSV row ends with rps, avg, min, p50, p95, p99, max; the test name before them holds commas itself
  const cells = (run.stdout.trim().split("\n").at(-1) ?? "").split(",").map((cell) => cell.replaceAll('"', ""));
  const [rps, p50, p99] = [cells.at(-7), cells.at(-4), cells.at(-2)];
  const created = (await admin.xlen(keys.queue(0))) - queuedBefore;
  console.log(
    `redis-benchmark EVALSHA accept (${CALLERS} clients, ${BENCH_REQUESTS} requests): ${Math.round(Number(rps))} ` +
      `accepts/s; p50 ${p50} ms, p99 ${p99} ms; ${created} created`,
  );
  const baseline = spawnSync(
    "redis-benchmark",
    ["-h", host, "-p", port, "-c", String(CALLERS), "-n", String(BENCH_REQUESTS), "-t", "set", "--csv"],
    { encoding: "utf8", timeout: 60_000 },
  );
  const setCells = (baseline.stdout.trim().split("\n").at(-1) ?? "").split(",").map((cell) => cell.replaceAll('"', ""));
  console.log(`redis-benchmark SET baseline on the same machine: ${Math.round(Number(setCells.at(-7)))} req/s`);
  admin.disconnect();
}

const server = await startRedis();
if (!server.owned) {
  await server.stop();
  throw new Error("REDIS_URL is set: this driver writes ~70,000 tasks and runs only on a redis-server of its own");
}
try {
  const version = spawnSync("redis-server", ["--version"], { encoding: "utf8" }).stdout.trim();
  console.log(`${version}; Bun ${Bun.version}`);
  await driveTaskJournal(server.url);
  await driveRedisBenchmark(server.url);
} finally {
  await server.stop();
}
