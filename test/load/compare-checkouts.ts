// Alternating rounds of the accept or the blocking load against our gateway as several checkouts build it (and, if
// asked, against the SDK's in-memory server), on one redis-server: how the profile findings price a change before it
// is made. Each round prints the rate, the CPU per request of the gateway, of the rest of the installation (supervisor
// and actors), of redis-server and of the load driver, and the latencies; the end prints each contender's medians.
//
//   bun test/load/compare-checkouts.ts [--load blocking|accept] [--rounds 3] [--requests N] [--clients N]
//     [--sdk bun,node] [name=path/to/checkout ...]
//
// Without a checkout it measures this one. Every checkout needs its own node_modules (`npm ci`, or a link to this
// checkout's) and this version's test/load files; a scratch copy of a change is the usual second checkout. Alternate
// several rounds and read the spread: on a busy 2-core machine a single round moves by 15–20%.
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { startRedis } from "../support/redis.ts";
import type { Compared, Contender, Load } from "./contenders.ts";
import type { BenchContext } from "./context.ts";
import { PeerDatabases } from "./peer-databases.ts";
import { fmt } from "./results.ts";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    load: { type: "string", default: "blocking" },
    rounds: { type: "string", default: "3" },
    requests: { type: "string" },
    clients: { type: "string" },
    sdk: { type: "string" },
  },
});
if (values.load !== "blocking" && values.load !== "accept") throw new Error("--load is blocking or accept");
const loadName = values.load;

/** A flag's whole number of at least 1, or undefined when the flag is absent. */
function count(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${flag} is a whole number of at least 1, not "${value}"`);
  return n;
}
const rounds = count("rounds", values.rounds) ?? 3;
const requests = count("requests", values.requests);
const clients = count("clients", values.clients);

const here = resolve(import.meta.dir, "../..");
const checkouts = (positionals.length > 0 ? positionals : [`head=${here}`]).map((argument) => {
  const at = argument.indexOf("=");
  const name = argument.slice(0, Math.max(at, 0));
  const path = argument.slice(at + 1);
  if (at < 1 || path === "") throw new Error(`"${argument}" is not name=path/to/checkout`);
  const root = resolve(path);
  if (!existsSync(`${root}/test/load/contenders.ts`)) throw new Error(`${root} holds no test/load/contenders.ts`);
  return { name, root };
});
if (new Set(checkouts.map(({ name }) => name)).size < checkouts.length) throw new Error("two checkouts share a name");
const sdkRuntimes = (values.sdk?.split(",") ?? []).map((runtime) => {
  if (runtime !== "bun" && runtime !== "node") throw new Error(`--sdk takes bun and node, not "${runtime}"`);
  return runtime;
});

const server = await startRedis({ unixSocket: true });
const admin = server.client();
const redisPid = Number(/process_id:(\d+)/.exec(await admin.info("server"))?.[1] ?? Number.NaN);
admin.disconnect();
const context: BenchContext = {
  redisUrl: server.url,
  redisSocketUrl: server.socketUrl ?? "",
  redisPid,
  databases: new PeerDatabases(),
  quick: false,
  log: () => {},
};

interface Entry {
  contender: Contender;
  /** Ours (gateway, then the rest of the installation) or the SDK's server (one process). */
  kind: "ours" | "sdk";
  load: Load;
  compare: (rounds: number, contenders: readonly Contender[], load: Load) => Promise<Map<string, Compared>>;
}

/** A checkout's contender and load, from its own test/load files (so that its own code is what runs). */
async function checkoutEntry(name: string, root: string): Promise<Entry & { killAll: () => void }> {
  const contenders = await import(`${root}/test/load/contenders.ts`);
  const processes = await import(`${root}/test/load/processes.ts`);
  let load: Load;
  let contender: Contender;
  if (loadName === "blocking") {
    const blocking = await import(`${root}/test/load/blocking-scenario.ts`);
    load = blocking.blockingLoad(context);
    contender = contenders.gatewayContender(context, name, blocking.blockingSetup());
  } else {
    const accept = await import(`${root}/test/load/accept-scenario.ts`);
    load = accept.acceptLoad(context);
    contender = contenders.gatewayContender(context, name, { profile: "noop", actors: 0 });
  }
  return {
    contender,
    kind: "ours",
    load: {
      ...load,
      ...(requests === undefined ? {} : { maxRequests: requests, maxSeconds: 60 }),
      ...(clients === undefined ? {} : { concurrency: clients }),
    },
    compare: (count, list, chosen) => contenders.compare(context, count, list, chosen),
    killAll: processes.killAll,
  };
}

const entries = await Promise.all(checkouts.map(({ name, root }) => checkoutEntry(name, root)));
const stopAll = async () => {
  for (const entry of entries) entry.killAll();
  await server.stop();
};
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => void stopAll().finally(() => process.exit(130)));
}
const first = entries[0];
if (!first) throw new Error("no checkout to measure");
if (sdkRuntimes.length > 0) {
  const { sdkContender } = await import("./contenders.ts");
  for (const runtime of sdkRuntimes) {
    const contender = sdkContender(context, runtime, loadName === "blocking" ? "echo" : "immediate");
    entries.push({ ...first, contender, kind: "sdk" });
  }
}

const results = new Map<string, { kind: Entry["kind"]; rounds: Compared[] }>();
try {
  for (let round = 1; round <= rounds; round++) {
    for (const entry of entries) {
      const measured = (await entry.compare(1, [entry.contender], entry.load)).get(entry.contender.name);
      if (!measured) throw new Error(`${entry.contender.name} did not run`);
      const earlier = results.get(entry.contender.name)?.rounds ?? [];
      results.set(entry.contender.name, { kind: entry.kind, rounds: [...earlier, measured] });
      console.log(`round ${round} ${line(measured, entry.kind)}`);
    }
  }
  console.log("medians:");
  for (const { kind, rounds: list } of results.values()) console.log(`  ${line(median(list), kind)}`);
} finally {
  await stopAll();
}

function line(compared: Compared, kind: Entry["kind"]): string {
  const { summary } = compared;
  const rest = compared.serverCpuPerRequestUs - compared.leadCpuPerRequestUs;
  const cpu =
    kind === "ours"
      ? [
          `gateway ${fmt(compared.leadCpuPerRequestUs)} µs`,
          `rest ${fmt(rest)} µs`,
          `redis-server ${fmt(compared.redisCpuPerRequestUs)} µs`,
        ]
      : [`server ${fmt(compared.serverCpuPerRequestUs)} µs`];
  return [
    compared.name.padEnd(12),
    `${fmt(summary.perSecond)}/s`.padStart(9),
    ...cpu,
    `driver ${fmt(compared.driverCpuPerRequestUs)} µs`,
    `p50 ${summary.p50.toFixed(2)} p99 ${summary.p99.toFixed(2)} max ${summary.max.toFixed(1)} ms`,
    `${summary.errors} errors`,
  ].join("  ");
}

/** Each figure's median over the rounds (figure by figure: not one round's figures). */
function median(list: readonly Compared[]): Compared {
  const mid = (pick: (one: Compared) => number) => {
    const sorted = list.map(pick).sort((a, b) => a - b);
    const half = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1 ? (sorted[half] ?? 0) : ((sorted[half - 1] ?? 0) + (sorted[half] ?? 0)) / 2;
  };
  const [one] = list;
  if (!one) throw new Error("no round to take a median of");
  return {
    ...one,
    summary: {
      ...one.summary,
      perSecond: mid((c) => c.summary.perSecond),
      p50: mid((c) => c.summary.p50),
      p99: mid((c) => c.summary.p99),
      max: mid((c) => c.summary.max),
      errors: list.reduce((sum, c) => sum + c.summary.errors, 0),
    },
    leadCpuPerRequestUs: mid((c) => c.leadCpuPerRequestUs),
    // the rest's own median, so that the line's "rest" is one
    serverCpuPerRequestUs:
      mid((c) => c.leadCpuPerRequestUs) + mid((c) => c.serverCpuPerRequestUs - c.leadCpuPerRequestUs),
    redisCpuPerRequestUs: mid((c) => c.redisCpuPerRequestUs),
    driverCpuPerRequestUs: mid((c) => c.driverCpuPerRequestUs),
  };
}
