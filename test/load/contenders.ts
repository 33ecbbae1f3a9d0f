// The HTTP systems a scenario compares (our gateway with or without actors, the SDK server on Bun or Node), each one
// started fresh per round, loaded by the same driver, and stopped; rounds alternate between them so that a slow
// moment of the machine does not fall on one system only.

import { freePort } from "../support/redis.ts";
import type { BenchContext } from "./context.ts";
import { runGrpcLoad } from "./grpc-load.ts";
import { type HttpAnswer, type LoadResult, runHttpLoad } from "./http-load.ts";
import { BUN, Installation } from "./installation.ts";
import type { PeerEngine } from "./peer-databases.ts";
import { type Child, childrenOf, cpuSeconds, mainThreadCpuSeconds, startChild } from "./processes.ts";
import { fmt, type Row } from "./results.ts";
import { type PeerMode, type PeerRuntime, startSdkServer } from "./sdk-peer.ts";
import { mergeSamples, type Sample, type Summary } from "./stats.ts";

export interface Load {
  concurrency: number;
  maxRequests: number;
  maxSeconds: number;
  warmupRequests: number;
  /** JSON-RPC body of request `seq`. */
  body(seq: number): string;
  check(answer: HttpAnswer): boolean;
}

export interface Measured extends Sample {
  firstError: string | undefined;
  /** CPU seconds of the system's processes (gateway, actors or SDK server) in the measured window. */
  serverCpu: number;
  redisCpu: number;
  /** Of serverCpu, the database server's share (durable SDK peers); 0 for the others. */
  databaseCpu: number;
  /** Of serverCpu, the first process's share: our gateway (its actors are the rest), a peer's server (all of it). */
  leadCpu: number;
  /** CPU seconds of the load driver (the bench's own process) in the measured window: it shares the machine. */
  driverCpu: number;
  /** Pids of the processes measured (gateway first), e.g. to find their CPU profiles. */
  pids: number[];
  /** CPU seconds of each pid's main thread since it started, read at the end of the load (for profiles' readers). */
  mainThreadCpu: number[];
}

export interface Contender {
  readonly name: string;
  run(load: Load): Promise<Measured>;
}

export interface Compared {
  name: string;
  summary: Summary & { errors: number };
  firstError: string | undefined;
  serverCpuPerRequestUs: number;
  redisCpuPerRequestUs: number;
  /** Of serverCpuPerRequestUs, the database server's share. */
  databaseCpuPerRequestUs: number;
  /** Of serverCpuPerRequestUs, the first process's share (our gateway; a peer's whole server). */
  leadCpuPerRequestUs: number;
  driverCpuPerRequestUs: number;
}

const A2A_HEADERS = { "Content-Type": "application/json", "A2A-Version": "1.0" };

/** Runs a load against one system (over HTTP/1.1 or gRPC). */
type Drive = (load: Load) => Promise<LoadResult>;

/** HTTP/1.1 POSTs of the load's JSON-RPC bodies to `path`. */
function httpDrive(port: number, path: string, headers: Record<string, string>): Drive {
  return (load) => runHttpLoad({ port, path, headers, ...load });
}

async function measure(
  context: BenchContext,
  drive: Drive,
  load: Load,
  pids: () => number[],
  databasePids: () => number[] = () => [],
): Promise<Measured> {
  const sum = (list: number[]) => list.reduce((total, pid) => total + cpuSeconds(pid), 0);
  const cpu = () => sum(pids());
  // The warm-up runs first on its own, so the CPU counters cover the measured window only.
  if (load.warmupRequests > 0) await drive({ ...load, maxRequests: load.warmupRequests, warmupRequests: 0 });
  const lead = () => cpuSeconds(pids()[0] ?? 0);
  const cpu0 = [cpu(), cpuSeconds(context.redisPid), sum(databasePids()), lead()];
  const driver0 = process.cpuUsage();
  const result = await drive({ ...load, warmupRequests: 0 });
  const driver = process.cpuUsage(driver0);
  return {
    latencies: result.latencies,
    seconds: result.seconds,
    errors: result.errors,
    firstError: result.firstError,
    serverCpu: cpu() - (cpu0[0] ?? 0),
    redisCpu: cpuSeconds(context.redisPid) - (cpu0[1] ?? 0),
    databaseCpu: sum(databasePids()) - (cpu0[2] ?? 0),
    leadCpu: lead() - (cpu0[3] ?? 0),
    driverCpu: (driver.user + driver.system) / 1e6,
    pids: pids(),
    mainThreadCpu: pids().map(mainThreadCpuSeconds),
  };
}

export interface GatewaySetup {
  /** Profile endpoint, e.g. "noop". */
  profile: string;
  /** A2A_* variables of the installation (gateway and actors). */
  env?: Record<string, string>;
  /** Actors to run (`work --actors N`); 0 seeds the liveness record instead. */
  actors: number;
  /** Extra arguments to bun for the gateway (e.g. --cpu-prof). */
  bunArgs?: string[];
  /** Another checkout's src/cli.ts for the gateway (before/after comparisons). */
  cli?: string;
  /** Drive the load over the gateway's gRPC server instead of its JSON-RPC endpoint. */
  grpc?: boolean;
}

export function gatewayContender(context: BenchContext, name: string, setup: GatewaySetup): Contender {
  return {
    name,
    async run(load) {
      const grpcPort = setup.grpc ? await freePort() : undefined;
      const env = { ...setup.env, ...(grpcPort === undefined ? {} : { A2A_SERVER_GRPC_PORT: String(grpcPort) }) };
      const inst = new Installation(context.redisUrl, { env });
      await inst.addClient();
      let beat: ReturnType<typeof setInterval> | undefined;
      let work: Child | undefined;
      let gateway: Child | undefined;
      try {
        if (setup.actors > 0) work = await inst.work(setup.actors);
        else {
          await inst.seedLiveBeat();
          beat = setInterval(() => void inst.seedLiveBeat().catch(() => {}), 10_000);
        }
        const started = await inst.gateway(setup.bunArgs ?? [], setup.cli);
        gateway = started.child;
        const headers = { ...A2A_HEADERS, Authorization: `Bearer ${inst.apiKey}` };
        const pids = () => [started.child.pid, ...(work ? childPids(work.pid) : [])];
        const drive: Drive =
          grpcPort === undefined
            ? httpDrive(started.port, `/a2a/${setup.profile}`, headers)
            : (grpcLoad) =>
                runGrpcLoad({
                  address: `127.0.0.1:${grpcPort}`,
                  apiKey: inst.apiKey,
                  ...grpcLoad,
                  // The profile is the request's tenant, as the card's gRPC interface says.
                  body: (seq) => withTenant(grpcLoad.body(seq), setup.profile),
                });
        return await measure(context, drive, load, pids);
      } finally {
        clearInterval(beat);
        await gateway?.stop();
        await work?.stop(30_000);
        await inst.close();
      }
    },
  };
}

/**
 * The SDK server on `runtime`: with its InMemoryTaskStore, or with `engine` its DatabaseTaskStore on a fresh database
 * per round (named `sdk-<engine>-<runtime>`); the database server's CPU counts with the peer's.
 */
export function sdkContender(
  context: BenchContext,
  runtime: PeerRuntime,
  mode: PeerMode,
  engine?: PeerEngine,
): Contender {
  return {
    name: engine ? `sdk-${engine}-${runtime}` : `sdk-${runtime}`,
    async run(load) {
      const database = engine ? await context.databases.fresh(engine) : undefined;
      const server = engine === "postgres" ? await context.databases.server() : undefined;
      const { child, port } = await startSdkServer(runtime, mode, database?.url);
      const databasePids = () => (typeof server === "object" ? server.pids() : []);
      try {
        const pids = () => [child.pid, ...databasePids()];
        return await measure(context, httpDrive(port, "/", A2A_HEADERS), load, pids, databasePids);
      } finally {
        await child.stop();
        await database?.drop();
      }
    },
  };
}

const FLOOR_SERVER = new URL("./floor-server.ts", import.meta.url).pathname;
let floorRounds = 0;

/**
 * The topology's floor (test/load/floor-server.ts): a gateway and a worker process with the same Redis hops as ours
 * and no other work; a fresh queue per round.
 */
export function floorContender(context: BenchContext): Contender {
  return {
    name: "floor",
    async run(load) {
      const name = `r${++floorRounds}`;
      const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" };
      const worker = startChild("floor worker", [BUN, FLOOR_SERVER, "worker", context.redisUrl, name], env);
      let gateway: Child | undefined;
      try {
        await worker.line(/floor-server worker ready/, 20_000);
        const port = await freePort();
        gateway = startChild(
          "floor gateway",
          [BUN, FLOOR_SERVER, "gateway", String(port), context.redisUrl, name],
          env,
        );
        await gateway.line(/floor-server gateway listening/, 20_000);
        const pids = [gateway.pid, worker.pid];
        return await measure(context, httpDrive(port, "/", A2A_HEADERS), load, () => pids);
      } finally {
        await gateway?.stop();
        await worker.stop();
      }
    },
  };
}

/** A JSON-RPC body whose params name `tenant`. */
function withTenant(body: string, tenant: string): string {
  const request = JSON.parse(body) as { params: Record<string, unknown> };
  return JSON.stringify({ ...request, params: { ...request.params, tenant } });
}

/** The `work` process and its actor processes, read from /proc. */
function childPids(pid: number): number[] {
  return [pid, ...childrenOf(pid)];
}

/**
 * Server, Redis and driver CPU per measured request, as a note for the report; with `parts`, the server's CPU split
 * between its first process and the others (e.g. the gateway, and the supervisor and actors).
 */
export function cpuNote(compared: Compared, parts?: { lead: string; rest: string }): string {
  const redis = Number.isFinite(compared.redisCpuPerRequestUs)
    ? `, redis-server ${fmt(compared.redisCpuPerRequestUs)} µs`
    : "";
  const error = compared.firstError ? `; first error: ${compared.firstError.slice(0, 160)}` : "";
  const database =
    compared.databaseCpuPerRequestUs > 0 ? ` (of it PostgreSQL ${fmt(compared.databaseCpuPerRequestUs)} µs)` : "";
  const rest = compared.serverCpuPerRequestUs - compared.leadCpuPerRequestUs;
  const split = parts ? ` (${parts.lead} ${fmt(compared.leadCpuPerRequestUs)}, ${parts.rest} ${fmt(rest)})` : "";
  const driver = `; the load driver ${fmt(compared.driverCpuPerRequestUs)} µs`;
  return `CPU per request: server ${fmt(compared.serverCpuPerRequestUs)} µs${split}${database}${redis}${driver}${error}`;
}

/**
 * Our gateway with the same setup driven over gRPC (the same requests, one HTTP/2 channel), measured like the others:
 * its row for a section, next to the JSON-RPC one.
 */
export async function grpcRow(
  context: BenchContext,
  rounds: number,
  setup: GatewaySetup,
  load: Load,
  row: { system: string; unit: string; command: string },
): Promise<Row> {
  context.log("  the gateway over gRPC");
  const name = "gateway-grpc";
  const measured = (
    await compare(context, rounds, [gatewayContender(context, name, { ...setup, grpc: true })], load)
  ).get(name);
  if (!measured) throw new Error("the gRPC contender did not run");
  return {
    ...row,
    role: "ours",
    summary: measured.summary,
    errors: measured.summary.errors,
    note: `${cpuNote(measured)}; ${load.concurrency} calls in flight on one HTTP/2 channel`,
  };
}

/** Runs every contender `rounds` times, alternating, and pools each one's rounds. */
export async function compare(
  context: BenchContext,
  rounds: number,
  contenders: readonly Contender[],
  load: Load,
): Promise<Map<string, Compared>> {
  const samples = new Map<string, Measured[]>(contenders.map((contender) => [contender.name, []]));
  for (let round = 1; round <= rounds; round++) {
    for (const contender of contenders) {
      const measured = await contender.run(load);
      samples.get(contender.name)?.push(measured);
      const rate = measured.latencies.length / measured.seconds;
      context.log(`  round ${round}/${rounds} ${contender.name}: ${fmt(rate)}/s, ${measured.errors} errors`);
    }
  }
  const out = new Map<string, Compared>();
  for (const [name, list] of samples) {
    const summary = mergeSamples(list);
    const count = Math.max(1, summary.count + summary.errors);
    out.set(name, {
      name,
      summary,
      firstError: list.find((sample) => sample.firstError)?.firstError,
      serverCpuPerRequestUs: (list.reduce((sum, sample) => sum + sample.serverCpu, 0) / count) * 1e6,
      redisCpuPerRequestUs: (list.reduce((sum, sample) => sum + sample.redisCpu, 0) / count) * 1e6,
      databaseCpuPerRequestUs: (list.reduce((sum, sample) => sum + sample.databaseCpu, 0) / count) * 1e6,
      leadCpuPerRequestUs: (list.reduce((sum, sample) => sum + sample.leadCpu, 0) / count) * 1e6,
      driverCpuPerRequestUs: (list.reduce((sum, sample) => sum + sample.driverCpu, 0) / count) * 1e6,
    });
  }
  return out;
}
