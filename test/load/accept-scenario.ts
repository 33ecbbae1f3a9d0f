// Scenario 1, accept: SendMessage with returnImmediately from 64 concurrent clients against our gateway, the
// @a2a-js/sdk server (Bun and Node), and the ceiling of the accept script alone under redis-benchmark.
import { acceptScriptCeiling, journalAccept, setBaseline } from "./accept-script.ts";
import { type Compared, compare, gatewayContender, type Load, sdkContender } from "./contenders.ts";
import { type BenchContext, pick } from "./context.ts";
import type { HttpAnswer } from "./http-load.ts";
import { sendMessageBody } from "./installation.ts";
import { fmt, type Row, type Section } from "./results.ts";
import { peerCommand } from "./sdk-peer.ts";

export const ACCEPT_CLIENTS = 64;

function accepted(answer: HttpAnswer): boolean {
  return answer.status === 200 && answer.body.includes('"result"') && answer.body.includes("TASK_STATE_");
}

/** Server and Redis CPU per measured request, as a note for the report. */
export function cpuNote(compared: Compared): string {
  const redis = Number.isFinite(compared.redisCpuPerRequestUs)
    ? `, redis-server ${fmt(compared.redisCpuPerRequestUs)} µs`
    : "";
  const error = compared.firstError ? `; first error: ${compared.firstError.slice(0, 160)}` : "";
  return `CPU per request: server ${fmt(compared.serverCpuPerRequestUs)} µs${redis}${error}`;
}

export function acceptLoad(context: BenchContext): Load {
  return {
    concurrency: ACCEPT_CLIENTS,
    ...pick(
      context,
      { maxRequests: 60_000, maxSeconds: 12, warmupRequests: 4_000 },
      { maxRequests: 15_000, maxSeconds: 4, warmupRequests: 1_000 },
    ),
    body: (seq) => sendMessageBody(seq, "hello", true, `accept-${Date.now()}`),
    check: accepted,
  };
}

export function peerRow(compared: Compared, unit: string, mode: "immediate" | "echo", only: string): Row {
  const runtime = compared.name === "sdk-bun" ? "bun" : "node";
  return {
    system: `@a2a-js/sdk server on ${runtime === "bun" ? "Bun" : "Node"} (InMemoryTaskStore)`,
    role: "peer",
    summary: compared.summary,
    unit,
    errors: compared.summary.errors,
    command: `npm run bench -- --only ${only}  (peer: ${peerCommand(runtime, mode)})`,
    note: cpuNote(compared),
  };
}

export async function acceptScenario(context: BenchContext): Promise<Section> {
  const load = acceptLoad(context);
  const rounds = pick(context, 3, 1);
  context.log("accept: gateway vs SDK server");
  const results = await compare(
    context,
    rounds,
    [
      gatewayContender(context, "gateway", { profile: "noop", actors: 0 }),
      sdkContender(context, "bun", "immediate"),
      sdkContender(context, "node", "immediate"),
    ],
    load,
  );
  const ours = results.get("gateway")!;
  const peers = [results.get("sdk-bun")!, results.get("sdk-node")!].map((peer) =>
    peerRow(peer, "accepts/s", "immediate", "accept"),
  );
  context.log("accept: redis-benchmark ceiling");
  const ceiling = await acceptScriptCeiling(context.redisUrl, ACCEPT_CLIENTS, pick(context, 200_000, 40_000));
  const inProcess = await journalAccept(
    context.redisUrl,
    ACCEPT_CLIENTS,
    pick(context, 50_000, 8_000),
    pick(context, 15, 3),
  );
  const setRps = setBaseline(context.redisUrl, ACCEPT_CLIENTS, pick(context, 200_000, 50_000));

  const bestPeer = peers.reduce((best, row) => (row.summary.perSecond > best.summary.perSecond ? row : best));
  const ourRate = ours.summary.perSecond;
  const vsPeer = ourRate / bestPeer.summary.perSecond;
  const vsCeiling = ourRate / ceiling.summary.perSecond;
  const rows: Row[] = [
    {
      system: "a2a-runtime gateway (`bun src/cli.ts gateway`)",
      role: "ours",
      summary: ours.summary,
      unit: "accepts/s",
      errors: ours.summary.errors,
      command: "npm run bench -- --only accept",
      note: cpuNote(ours),
    },
    ...peers,
    {
      system: "ceiling: redis-benchmark EVALSHA accept-13.lua",
      role: "ceiling",
      summary: ceiling.summary,
      unit: "accepts/s",
      errors: 0,
      command: ceiling.command,
      note: `${fmt(ceiling.created)} tasks created; p90 not reported by redis-benchmark (p95 instead)`,
    },
    {
      system: "reference: TaskJournal.accept in-process (ioredis, no HTTP)",
      role: "reference",
      summary: inProcess,
      unit: "accepts/s",
      errors: 0,
      command: "bun test/load/accept-script.ts",
    },
  ];
  const slowerThanPeer = vsPeer < 2;
  const bestPeerCpu =
    [...results.values()].find(
      (entry) => bestPeer.system.includes(entry.name === "sdk-bun" ? "Bun" : "Node") && entry.name !== "gateway",
    )?.serverCpuPerRequestUs ?? Number.NaN;
  return {
    id: "accept",
    title: "1. Accept: SendMessage with returnImmediately, 64 concurrent clients",
    setup: [
      `${ACCEPT_CLIENTS} keep-alive HTTP/1.1 connections, one request in flight each; every request a new messageId.`,
      `Bounds per round: ${fmt(load.warmupRequests)} warm-up requests (not counted), then at most ${fmt(load.maxRequests)} requests or ${load.maxSeconds} s; ${rounds} round(s) per system, alternating, each on a freshly started server; rounds pooled.`,
      "Ours: one gateway process, profile `noop`, Bearer API key; the worker liveness record is seeded (no actor runs), so the figure is the accept path alone.",
      "Peer: `DefaultRequestHandler` + `InMemoryTaskStore` + an executor that publishes the task and COMPLETED at once, served by `jsonRpcHandler` on express 5 with NODE_ENV=production, no authentication; measured on Bun and on Node, the faster one is the ratio's peer.",
      `Ceiling: redis-benchmark with the same ${ACCEPT_CLIENTS} clients runs EVALSHA of the accept script, each call a fresh task (__rand_int__ ids), with a live beat and a client record seeded.`,
    ],
    rows,
    targets: [
      {
        text: "accept ≥ 2× the SDK server's throughput",
        measured: `${vsPeer.toFixed(2)}× (${fmt(ourRate)} vs ${fmt(bestPeer.summary.perSecond)} accepts/s, ${bestPeer.system})`,
        met: vsPeer >= 2,
        ...(slowerThanPeer
          ? {
              why: `short by ${fmt((2 - vsPeer) * bestPeer.summary.perSecond)} accepts/s (${((1 - vsPeer / 2) * 100).toFixed(0)}% below the target). Each accept is a durable write and two Redis round trips (accept script, then the snapshot script for the answer), where the SDK answers from memory; on 2 cores the gateway, redis-server and the driver share the CPU, so compare the CPU per request: gateway ${fmt(ours.serverCpuPerRequestUs)} µs + redis-server ${fmt(ours.redisCpuPerRequestUs)} µs per accept against the SDK's ${fmt(bestPeerCpu)} µs. See the profile findings.`,
            }
          : {}),
      },
      {
        text: "accept ≥ 35% of the redis-benchmark ceiling",
        measured: `${(vsCeiling * 100).toFixed(0)}% (${fmt(ourRate)} vs ${fmt(ceiling.summary.perSecond)} accepts/s)`,
        met: vsCeiling >= 0.35,
        ...(vsCeiling < 0.35
          ? {
              why: `short by ${fmt((0.35 - vsCeiling) * ceiling.summary.perSecond)} accepts/s; see the profile findings.`,
            }
          : {}),
      },
    ],
    figures: [
      ["redis-benchmark SET on this server (64 clients), for scale", `${fmt(setRps)} req/s`],
      ["ours ÷ best SDK peer", `${vsPeer.toFixed(2)}×`],
      ["ours ÷ ceiling", `${(vsCeiling * 100).toFixed(1)}%`],
    ],
    notes: [],
  };
}
