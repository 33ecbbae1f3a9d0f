// Scenario 1, accept: SendMessage with returnImmediately from 64 concurrent clients against our gateway, the
// @a2a-js/sdk server (in memory, on PostgreSQL and on SQLite; Bun and Node), and the accept script's redis-benchmark
// ceiling.
import { acceptScriptCeiling, journalAccept, setBaseline } from "./accept-script.ts";
import { cpuNote, gatewayContender, grpcRow, type Load } from "./contenders.ts";
import { type BenchContext, pick } from "./context.ts";
import type { HttpAnswer } from "./http-load.ts";
import { sendMessageBody } from "./installation.ts";
import { fmt, type Row, type Section } from "./results.ts";
import {
  compareWithPeers,
  DURABLE_PEERS_SETUP,
  ONE_CLIENT_SETUP,
  oneClientComparison,
  peerFigures,
  ratioText,
} from "./sdk-peers.ts";

export const ACCEPT_CLIENTS = 64;
export const ACCEPT_TITLE = `Accept: SendMessage with returnImmediately, ${ACCEPT_CLIENTS} concurrent clients`;
const OURS_SYSTEM = "a2a-runtime gateway (`bun src/cli.ts gateway`)";
export const ACCEPT_TARGETS = [
  "accept ≥ 2.5× the SDK's in-memory server's throughput",
  "accept ≥ 35% of the redis-benchmark ceiling",
];

function accepted(answer: HttpAnswer): boolean {
  return answer.status === 200 && answer.body.includes('"result"') && answer.body.includes("TASK_STATE_");
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

export async function acceptScenario(context: BenchContext): Promise<Section> {
  const load = acceptLoad(context);
  const rounds = pick(context, 3, 1);
  const ourContender = gatewayContender(context, "gateway", { profile: "noop", actors: 0 });
  const comparison = await compareWithPeers(context, rounds, ourContender, "immediate", load, "accepts/s");
  const overGrpc = await grpcRow(context, rounds, { profile: "noop", actors: 0 }, load, {
    system: "a2a-runtime gateway over gRPC (`server.grpcPort`)",
    unit: "accepts/s",
    command: "npm run bench -- --only accept",
  });
  const { ours, inMemory } = comparison;
  const oneClient = await oneClientComparison(
    context,
    rounds,
    { contender: ourContender, system: OURS_SYSTEM, note: (compared) => cpuNote(compared) },
    comparison,
    "immediate",
    load,
    "accepts/s",
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

  const ourRate = ours.summary.perSecond;
  const vsPeer = ourRate / inMemory.compared.summary.perSecond;
  const vsCeiling = ourRate / ceiling.summary.perSecond;
  const rows: Row[] = [
    {
      system: OURS_SYSTEM,
      role: "ours",
      summary: ours.summary,
      unit: "accepts/s",
      errors: ours.summary.errors,
      command: "npm run bench -- --only accept",
      note: cpuNote(ours),
    },
    overGrpc,
    ...comparison.peerRows,
    ...oneClient.rows,
    {
      system: "ceiling: redis-benchmark EVALSHA accept-15.lua",
      role: "ceiling",
      summary: ceiling.summary,
      unit: "accepts/s",
      errors: 0,
      command: ceiling.command,
      note: `${fmt(ceiling.created)} tasks created; p90 and p99.9 not reported by redis-benchmark`,
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
  return {
    id: "accept",
    title: ACCEPT_TITLE,
    setup: [
      `${ACCEPT_CLIENTS} keep-alive HTTP/1.1 connections, one request in flight each; every request a new messageId.`,
      `Bounds per round: ${fmt(load.warmupRequests)} warm-up requests (not counted), then at most ${fmt(load.maxRequests)} requests or ${load.maxSeconds} s; ${rounds} round(s) per system, alternating, each on a freshly started server; rounds pooled.`,
      "Ours: one gateway process, profile `noop`, Bearer API key; the worker liveness record is seeded (no actor runs), so the figure is the accept path alone.",
      `Ours over gRPC: the same gateway with server.grpcPort set, the same requests as SendMessageRequest messages (tenant \`noop\`), ${ACCEPT_CLIENTS} calls in flight on one HTTP/2 channel (@grpc/grpc-js in the driver).`,
      "Peers: `DefaultRequestHandler` + an executor that publishes the task and COMPLETED at once, served by `jsonRpcHandler` on express 5 with NODE_ENV=production, no authentication; each store on Bun and on Node where it loads, the faster runtime is the store's peer in the ratios.",
      ...DURABLE_PEERS_SETUP,
      ONE_CLIENT_SETUP,
      `Ceiling: redis-benchmark with the same ${ACCEPT_CLIENTS} clients runs EVALSHA of the accept script, each call a fresh task (__rand_int__ ids), with a live beat and a client record seeded.`,
    ],
    rows,
    targets: [
      {
        text: ACCEPT_TARGETS[0] ?? "",
        measured: ratioText(ourRate, inMemory, "accepts/s"),
        met: vsPeer >= 2.5,
        ...(vsPeer < 2.5
          ? {
              why: `short by ${fmt((2.5 - vsPeer) * inMemory.compared.summary.perSecond)} accepts/s (${((1 - vsPeer / 2.5) * 100).toFixed(0)}% below the target). Each accept is a durable write in Redis where the SDK answers from memory; on 2 cores the gateway, redis-server and the driver share the CPU, so compare the CPU per request: gateway ${fmt(ours.serverCpuPerRequestUs)} µs + redis-server ${fmt(ours.redisCpuPerRequestUs)} µs per accept against the SDK's ${fmt(inMemory.compared.serverCpuPerRequestUs)} µs. The accept script alone, sent by redis-benchmark with no HTTP and no gateway, reached ${fmt(ceiling.summary.perSecond)} accepts/s on this machine: ${(ceiling.summary.perSecond / inMemory.compared.summary.perSecond).toFixed(2)}× the SDK${ceiling.summary.perSecond < 2.5 * inMemory.compared.summary.perSecond ? ", below the target itself, so no gateway in front of this script can meet it here" : ""}. See the profile findings.`,
            }
          : {}),
      },
      {
        text: ACCEPT_TARGETS[1] ?? "",
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
      ...peerFigures(comparison, "accepts/s"),
      oneClient.figure,
      ["ours ÷ ceiling", `${(vsCeiling * 100).toFixed(1)}%`],
    ],
    notes: comparison.notes,
  };
}
