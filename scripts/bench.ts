// `npm run bench [-- --quick] [-- --only accept,blocking,runs,streams,cost,streaming,list,durability,tracing,profile]`: starts its own
// redis-server on a free loopback port (and PostgreSQL, for the durable SDK peers), runs every scenario side by side
// with its peers, and writes BENCHMARKS.md (with --only, the chosen sections are printed and BENCHMARKS.md is left alone
// unless --out is given). Every driver is bounded.
import { readFileSync, writeFileSync } from "node:fs";
import { ACCEPT_TARGETS, ACCEPT_TITLE, acceptScenario } from "../test/load/accept-scenario.ts";
import { BLOCKING_TARGETS, BLOCKING_TITLE, blockingScenario } from "../test/load/blocking-scenario.ts";
import type { BenchContext } from "../test/load/context.ts";
import { COST_TARGETS, COST_TITLE, costScenario } from "../test/load/cost-scenario.ts";
import { DURABILITY_TITLE, durabilityScenario } from "../test/load/durability-scenario.ts";
import { LIST_TARGETS, LIST_TITLE, listScenario } from "../test/load/list-scenario.ts";
import { PeerDatabases } from "../test/load/peer-databases.ts";
import { killAll } from "../test/load/processes.ts";
import { profileAnalysis, profileScenario } from "../test/load/profile-scenario.ts";
import { renderReport } from "../test/load/report.ts";
import { notMeasured, type Section } from "../test/load/results.ts";
import { RUNS_TARGETS, RUNS_TITLE, runsScenario } from "../test/load/runs-scenario.ts";
import { STREAMING_TARGETS, STREAMING_TITLE, streamingScenario } from "../test/load/streaming-scenario.ts";
import { STREAMS_TARGETS, STREAMS_TITLE, streamsScenario } from "../test/load/streams-scenario.ts";
import { TRACING_TITLE, tracingScenario } from "../test/load/tracing-scenario.ts";
import { machine, versions } from "../test/load/versions.ts";
import { startRedis } from "../test/support/redis.ts";

const SCENARIOS: Record<
  string,
  { title: string; targets: string[]; run: (context: BenchContext) => Promise<Section> }
> = {
  accept: {
    title: ACCEPT_TITLE,
    targets: ACCEPT_TARGETS,
    run: acceptScenario,
  },
  blocking: {
    title: BLOCKING_TITLE,
    targets: BLOCKING_TARGETS,
    run: blockingScenario,
  },
  runs: {
    title: RUNS_TITLE,
    targets: RUNS_TARGETS,
    run: runsScenario,
  },
  streams: {
    title: STREAMS_TITLE,
    targets: STREAMS_TARGETS,
    run: streamsScenario,
  },
  cost: {
    title: COST_TITLE,
    targets: COST_TARGETS,
    run: costScenario,
  },
  streaming: {
    title: STREAMING_TITLE,
    targets: STREAMING_TARGETS,
    run: streamingScenario,
  },
  list: {
    title: LIST_TITLE,
    targets: LIST_TARGETS,
    run: listScenario,
  },
  durability: {
    title: DURABILITY_TITLE,
    targets: [],
    run: durabilityScenario,
  },
  tracing: {
    title: TRACING_TITLE,
    targets: [],
    run: tracingScenario,
  },
};

function option(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

const quick = process.argv.includes("--quick");
const only = option("--only")
  ?.split(",")
  .map((name) => name.trim());
const out = option("--out") ?? (only ? undefined : new URL("../BENCHMARKS.md", import.meta.url).pathname);
for (const name of only ?? []) {
  if (!(name in SCENARIOS) && name !== "profile") throw new Error(`unknown scenario "${name}"`);
}

const startedAt = new Date();
const loadAverage = () => {
  try {
    return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(", ");
  } catch {
    return "unknown";
  }
};
const loadAtStart = loadAverage();
const log = (line: string) =>
  process.stderr.write(`[bench ${((Date.now() - startedAt.getTime()) / 1000).toFixed(0)}s] ${line}\n`);
// The bench owns its redis-server: a REDIS_URL of the environment is never written to.
delete process.env.REDIS_URL;
const server = await startRedis({ unixSocket: true });
const databases = new PeerDatabases();
const stop = async () => {
  await databases.stop().catch(() => {});
  killAll();
  await server.stop();
};
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    log(`${signal}: stopping every child process`);
    void stop().finally(() => process.exit(130));
  });
}

try {
  const admin = server.client();
  const redisPid = Number(/process_id:(\d+)/.exec(await admin.info("server"))?.[1] ?? Number.NaN);
  admin.disconnect();
  const redisSocketUrl = server.socketUrl ?? "";
  const context: BenchContext = { redisUrl: server.url, redisSocketUrl, redisPid, databases, quick, log };
  log(`redis-server on ${server.url} (pid ${redisPid}); ${quick ? "quick" : "full"} run`);
  const sections: Section[] = [];
  for (const [index, [id, scenario]] of Object.entries(SCENARIOS).entries()) {
    if (only && !only.includes(id)) continue;
    // numbered by their place in the full run, so a section keeps its number in a run of a few
    const numbered = (section: Section): Section => ({ ...section, title: `${index + 1}. ${section.title}` });
    try {
      // every scenario starts on an empty server, so one's keys (and their TTLs) never weigh on the next
      const redis = server.client();
      await redis.flushall();
      redis.disconnect();
      log(`${id}: start (load average ${loadAverage()})`);
      sections.push(numbered(await scenario.run(context)));
    } catch (error) {
      const reason = `the scenario failed (${error instanceof Error ? error.message.split("\n")[0] : String(error)})`;
      log(`${id}: ${reason}`);
      killAll();
      sections.push(numbered(notMeasured(id, scenario.title, reason, scenario.targets)));
    }
  }
  let profile: string;
  if ((!quick && !only) || only?.includes("profile")) {
    try {
      profile = await profileScenario(context);
    } catch (error) {
      killAll();
      profile = `Not profiled in this run: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}.\n\n${profileAnalysis()}`;
    }
  } else {
    profile = `Profiles are taken by full runs only (\`npm run bench\`, or \`npm run bench -- --only profile\`).\n\n${profileAnalysis()}`;
  }
  const seconds = (Date.now() - startedAt.getTime()) / 1000;
  const report = renderReport({
    quick,
    startedAt,
    seconds,
    machine: machine(),
    versions: versions(),
    sections,
    profile,
    loadAverage: { start: loadAtStart, end: loadAverage() },
  });
  if (out) {
    writeFileSync(out, report);
    log(`wrote ${out} in ${seconds.toFixed(0)} s`);
  } else process.stdout.write(report);
} finally {
  await stop();
}
