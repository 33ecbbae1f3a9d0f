// Scenario 3, runs: how many no-op runs per second the supervisor's actors finish (2 actors × worker.concurrency), and
// BullMQ's Worker with a no-op processor on the same Redis with the same concurrency (2 processes × concurrency).
// Both queues are filled first; the rate is taken from 10% done to all done, so process start-up is excluded.
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { TaskJournal } from "../../src/journal/index.ts";
import { type BenchContext, pick } from "./context.ts";
import { BUN, Installation } from "./installation.ts";
import { type Child, childrenOf, cpuSeconds, startChild } from "./processes.ts";
import { fmt, type Row, type Section } from "./results.ts";
import { bundleForNode, type PeerRuntime } from "./sdk-peer.ts";
import { rateOnly } from "./stats.ts";
import { packageVersion } from "./versions.ts";

export const RUNS_TITLE = "Runs: no-op runs per second through the supervisor vs BullMQ";
export const RUNS_TARGETS = ["runs ≥ 1× BullMQ's worker throughput"];

const ACTORS = 2;
/** worker.concurrency's default: runs one actor executes at once. */
const CONCURRENCY = 8;
const WARM_FRACTION = 0.1;
const BULLMQ_WORKER = new URL("./bullmq-worker.ts", import.meta.url).pathname;

interface Drained {
  runs: number;
  seconds: number;
  workerCpu: number;
  redisCpu: number;
  finished: boolean;
}

/**
 * Polls `remaining()` until it is 0 or `maxSeconds` pass; the rate window runs from the first poll with at least
 * WARM_FRACTION done to the last poll. `pids()` names the worker processes whose CPU the window covers.
 */
async function drain(
  context: BenchContext,
  total: number,
  remaining: () => Promise<number>,
  pids: () => number[],
  maxSeconds: number,
): Promise<Drained> {
  const cpu = () => pids().reduce((sum, pid) => sum + cpuSeconds(pid), 0);
  const deadline = performance.now() + maxSeconds * 1000;
  let warm: { t: number; done: number; cpu: number; redis: number } | undefined;
  let last = { t: performance.now(), done: 0 };
  while (performance.now() < deadline) {
    const done = total - (await remaining());
    last = { t: performance.now(), done };
    if (!warm && done >= total * WARM_FRACTION) warm = { ...last, cpu: cpu(), redis: cpuSeconds(context.redisPid) };
    if (done >= total) break;
    await Bun.sleep(20);
  }
  if (!warm) return { runs: 0, seconds: 0, workerCpu: 0, redisCpu: 0, finished: false };
  return {
    runs: last.done - warm.done,
    seconds: (last.t - warm.t) / 1000,
    workerCpu: cpu() - warm.cpu,
    redisCpu: cpuSeconds(context.redisPid) - warm.redis,
    finished: last.done >= total,
  };
}

async function ours(context: BenchContext, total: number, maxSeconds: number): Promise<Drained> {
  const inst = new Installation(context.redisUrl, { env: { A2A_WORKER_CONCURRENCY: String(CONCURRENCY) } });
  let work: Child | undefined;
  try {
    await inst.addClient();
    await inst.seedLiveBeat();
    const connections = Array.from({ length: 8 }, () => new Redis(context.redisUrl));
    let issued = 0;
    await Promise.all(
      connections.map(async (redis) => {
        const journal = new TaskJournal(redis, inst.keys, {
          livenessSeconds: 3600,
          dedupSeconds: 86_400,
          retryAfterSeconds: 5,
        });
        while (issued < total) {
          issued += 1;
          const message = { messageId: `runs-${issued}`, role: "ROLE_USER" as const, parts: [{ text: "hello" }] };
          await journal.accept({ clientId: inst.clientId, profile: "noop", profileQuota: 0, message });
        }
      }),
    );
    for (const redis of connections) redis.disconnect();
    let workPid = 0;
    const drained = drain(
      context,
      total,
      () => inst.active(),
      () => (workPid ? [workPid, ...childrenOf(workPid)] : []),
      maxSeconds,
    );
    work = await inst.work(ACTORS);
    workPid = work.pid;
    return await drained;
  } finally {
    await work?.stop(30_000);
    await inst.close();
  }
}

async function bullmq(
  context: BenchContext,
  runtime: PeerRuntime,
  total: number,
  maxSeconds: number,
): Promise<Drained> {
  const { hostname, port } = new URL(context.redisUrl);
  const name = `bench-${Date.now()}`;
  const queue = new Queue(name, { connection: { host: hostname, port: Number(port) } });
  const workers: Child[] = [];
  try {
    for (let added = 0; added < total; added += 1000) {
      const jobs = Array.from({ length: Math.min(1000, total - added) }, (_, i) => ({
        name: "noop",
        data: { message: { messageId: `runs-${added + i}`, role: "ROLE_USER", parts: [{ text: "hello" }] } },
      }));
      await queue.addBulk(jobs);
    }
    const remaining = async () => {
      const counts = await queue.getJobCounts("wait", "active", "prioritized", "delayed");
      return Object.values(counts).reduce((sum, count) => sum + count, 0);
    };
    const drained = drain(context, total, remaining, () => workers.map((worker) => worker.pid), maxSeconds);
    const script = runtime === "bun" ? [BUN, BULLMQ_WORKER] : ["node", bundleForNode(BULLMQ_WORKER)];
    const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", NODE_ENV: "production" };
    for (let i = 0; i < ACTORS; i++) {
      workers.push(startChild(`bullmq-worker-${i}`, [...script, context.redisUrl, name, String(CONCURRENCY)], env));
    }
    return await drained;
  } finally {
    await Promise.all(workers.map((worker) => worker.stop()));
    await queue.obliterate({ force: true }).catch(() => {});
    await queue.close();
  }
}

function row(system: string, role: "ours" | "peer", drained: Drained, command: string): Row {
  const per = (seconds: number) => `${fmt((seconds / Math.max(1, drained.runs)) * 1e6)} µs`;
  return {
    system,
    role,
    summary: rateOnly(drained.runs, drained.seconds),
    unit: "runs/s",
    errors: drained.finished ? 0 : 1,
    command,
    note: `CPU per run: workers ${per(drained.workerCpu)}, redis-server ${per(drained.redisCpu)}${drained.finished ? "" : "; did not finish within the time bound"}`,
  };
}

/** Rounds of one system pooled: runs, seconds and CPU summed; finished only when every round finished. */
function pooled(rounds: readonly Drained[]): Drained {
  return {
    runs: rounds.reduce((sum, r) => sum + r.runs, 0),
    seconds: rounds.reduce((sum, r) => sum + r.seconds, 0),
    workerCpu: rounds.reduce((sum, r) => sum + r.workerCpu, 0),
    redisCpu: rounds.reduce((sum, r) => sum + r.redisCpu, 0),
    finished: rounds.every((r) => r.finished),
  };
}

export async function runsScenario(context: BenchContext): Promise<Section> {
  const total = pick(context, 30_000, 5_000);
  const maxSeconds = pick(context, 90, 25);
  const rounds = pick(context, 3, 1);
  const runtimes = ["bun", "node"] as const;
  const drained = { ours: [] as Drained[], bun: [] as Drained[], node: [] as Drained[] };
  // rounds alternate between the systems, so that a noisy minute on the machine falls on all of them
  for (let round = 1; round <= rounds; round++) {
    context.log(`runs: round ${round}/${rounds}, ${fmt(total)} no-op runs each`);
    const a = await ours(context, total, maxSeconds);
    drained.ours.push(a);
    context.log(`  ours: ${fmt(a.runs / a.seconds)}/s`);
    for (const runtime of runtimes) {
      const b = await bullmq(context, runtime, total, maxSeconds);
      drained[runtime].push(b);
      context.log(`  bullmq (${runtime}): ${fmt(b.runs / b.seconds)}/s`);
    }
  }
  const peers: Row[] = runtimes.map((runtime) =>
    row(
      `BullMQ ${packageVersion("bullmq")} Worker on ${runtime === "bun" ? "Bun" : "Node"}, ${ACTORS} processes × concurrency ${CONCURRENCY}`,
      "peer",
      pooled(drained[runtime]),
      `npm run bench -- --only runs  (peer: ${runtime} test/load/bullmq-worker.ts <url> <queue> ${CONCURRENCY})`,
    ),
  );
  const a = pooled(drained.ours);
  const mine = row(
    `a2a-runtime \`work --actors ${ACTORS}\` (worker.concurrency ${CONCURRENCY}), noop handler`,
    "ours",
    a,
    "npm run bench -- --only runs",
  );
  const best = peers.reduce((top, candidate) =>
    candidate.summary.perSecond > top.summary.perSecond ? candidate : top,
  );
  const ratio = mine.summary.perSecond / best.summary.perSecond;
  return {
    id: "runs",
    title: RUNS_TITLE,
    setup: [
      `${fmt(total)} runs queued before the workers start (ours: accepted through TaskJournal.accept with a seeded liveness record; BullMQ: Queue.addBulk of jobs with the same message as data).`,
      `Ours: \`bun src/cli.ts work --actors ${ACTORS}\`, worker.concurrency ${CONCURRENCY} (default), profile \`noop\`: every run is claimed (lease + fencing token), moved to COMPLETED with its start (WORKING) through the transition script (journal entries, retention TTLs) and acknowledged; that script also claims the actor's next queued run.`,
      `BullMQ: ${ACTORS} worker processes, concurrency ${CONCURRENCY} each, no-op processor, ioredis connection (maxRetriesPerRequest null), removeOnComplete {count: 1000}, removeOnFail {count: 5000} as its docs recommend; on Bun and on Node, the faster is the ratio's peer.`,
      `The rate is counted from ${WARM_FRACTION * 100}% done to all done (polled every 20 ms), so process start-up is excluded; bound: ${maxSeconds} s. ${rounds} round(s) per system, alternating, each with a fresh queue and fresh workers; rounds pooled (runs, seconds and CPU summed). Latency percentiles do not apply (a drained backlog).`,
    ],
    rows: [mine, ...peers],
    targets: [
      {
        text: RUNS_TARGETS[0] ?? "",
        measured: `${ratio.toFixed(2)}× (${fmt(mine.summary.perSecond)} vs ${fmt(best.summary.perSecond)} runs/s, ${best.system})`,
        met: ratio >= 1,
        ...(ratio < 1
          ? {
              why: `short by ${fmt(best.summary.perSecond - mine.summary.perSecond)} runs/s (${((1 - ratio) * 100).toFixed(0)}%). While the queue holds runs, a run costs one script call: the end of the run before it (the artifact, COMPLETED, its journal entry, the push outbox, the stored-bytes and index bookkeeping, the ack of the queue entry and the notice) reads and claims it (lease, fencing token, the task returned), as BullMQ's moveToFinished fetches the next job; what is left is the work in each: about 30 commands per run in Redis against BullMQ's lighter script, and the actor's JS around the handler (the Redis client's encoding of a 22-key call, the task's JSON, the writer); see the CPU per run.`,
            }
          : {}),
      },
    ],
    figures: [],
    notes: [],
  };
}
