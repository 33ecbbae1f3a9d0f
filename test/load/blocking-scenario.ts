// Scenario 2, blocking round trip: SendMessage that waits for an `echo` run (gateway → Redis → actor → Redis →
// gateway) from 32 concurrent clients, against the @a2a-js/sdk server running the same echo in its own process (in
// memory, on PostgreSQL and on SQLite).
import {
  type Compared,
  compare,
  cpuNote,
  floorContender,
  type GatewaySetup,
  gatewayContender,
  grpcRow,
  type Load,
} from "./contenders.ts";
import { type BenchContext, pick } from "./context.ts";
import type { HttpAnswer } from "./http-load.ts";
import { sendMessageBody } from "./installation.ts";
import { fmt, ms, type Row, type Section } from "./results.ts";
import {
  compareWithPeers,
  DURABLE_PEERS_SETUP,
  ONE_CLIENT_SETUP,
  oneClientComparison,
  peerFigures,
  ratioText,
  totalCpuUs,
} from "./sdk-peers.ts";

export const BLOCKING_CLIENTS = 32;
export const BLOCKING_TITLE = `Blocking round trip: SendMessage waiting for echo, ${BLOCKING_CLIENTS} concurrent clients`;
export const BLOCKING_TARGETS = [
  "blocking round trip throughput ≥ 1× the SDK's in-memory server",
  "blocking round trip CPU per request ≤ the SDK's in-memory server's",
  "blocking round trip maximum latency ≤ 10× p50",
];
/** Actor processes and runs per actor for our side: together they hold every client's run at once. */
export const BLOCKING_ACTORS = 1;
export const BLOCKING_CONCURRENCY = 32;

function completed(answer: HttpAnswer): boolean {
  return answer.status === 200 && answer.body.includes("TASK_STATE_COMPLETED") && answer.body.includes('"hello"');
}

export function blockingLoad(context: BenchContext): Load {
  return {
    concurrency: BLOCKING_CLIENTS,
    ...pick(
      context,
      { maxRequests: 30_000, maxSeconds: 12, warmupRequests: 2_000 },
      { maxRequests: 8_000, maxSeconds: 4, warmupRequests: 500 },
    ),
    body: (seq) => sendMessageBody(seq, "hello", false, `blocking-${Date.now()}`),
    check: completed,
  };
}

/** Our side: the echo profile, its actors, and room for every client to wait. */
export function blockingSetup(): GatewaySetup {
  return {
    profile: "echo",
    actors: BLOCKING_ACTORS,
    env: {
      A2A_SERVER_MAX_WAITING_REQUESTS: String(BLOCKING_CLIENTS * 2),
      A2A_CLIENTS_MAX_WAITING_REQUESTS: String(BLOCKING_CLIENTS * 2),
      A2A_WORKER_CONCURRENCY: String(BLOCKING_CONCURRENCY),
    },
  };
}

export async function blockingScenario(context: BenchContext): Promise<Section> {
  const load = blockingLoad(context);
  const rounds = pick(context, 3, 1);
  const ourContender = gatewayContender(context, "gateway", blockingSetup());
  const comparison = await compareWithPeers(context, rounds, ourContender, "echo", load, "round trips/s");
  const overGrpc = await grpcRow(context, rounds, blockingSetup(), load, {
    system: `a2a-runtime gateway over gRPC + \`work --actors ${BLOCKING_ACTORS}\` (echo)`,
    unit: "round trips/s",
    command: "npm run bench -- --only blocking",
  });
  context.log("  ours with Redis over its Unix socket");
  const socketSetup = { ...blockingSetup(), env: { ...blockingSetup().env, A2A_REDIS_URL: context.redisSocketUrl } };
  const overSocket = (
    await compare(context, rounds, [gatewayContender(context, "gateway-unix", socketSetup)], load)
  ).get("gateway-unix");
  if (!overSocket) throw new Error("the Unix socket contender did not run");
  context.log("  the topology's floor");
  const floor = (await compare(context, rounds, [floorContender(context)], load)).get("floor");
  if (!floor) throw new Error("the floor contender did not run");
  const { ours, inMemory } = comparison;
  const oursSystem = `a2a-runtime gateway + \`work --actors ${BLOCKING_ACTORS}\` (echo)`;
  const byProcess = (compared: Compared) => cpuNote(compared, { lead: "gateway", rest: "supervisor and actors" });
  const oneClient = await oneClientComparison(
    context,
    rounds,
    { contender: ourContender, system: oursSystem, note: byProcess },
    comparison,
    "echo",
    load,
    "round trips/s",
  );
  const rows: Row[] = [
    {
      system: oursSystem,
      role: "ours",
      summary: ours.summary,
      unit: "round trips/s",
      errors: ours.summary.errors,
      command: "npm run bench -- --only blocking",
      note: byProcess(ours),
    },
    overGrpc,
    {
      system: `${oursSystem}, Redis over its Unix socket`,
      role: "ours",
      summary: overSocket.summary,
      unit: "round trips/s",
      errors: overSocket.summary.errors,
      command: "npm run bench -- --only blocking",
      note: byProcess(overSocket),
    },
    ...comparison.peerRows,
    ...oneClient.rows,
    {
      system: "reference: the topology's floor (test/load/floor-server.ts)",
      role: "reference",
      summary: floor.summary,
      unit: "round trips/s",
      errors: floor.summary.errors,
      command: "npm run bench -- --only blocking",
      note: cpuNote(floor, { lead: "its gateway", rest: "its worker" }),
    },
  ];
  const { p50, max, perSecond } = ours.summary;
  const vsPeer = perSecond / inMemory.compared.summary.perSecond;
  const ourCpu = totalCpuUs(ours);
  const peerCpu = totalCpuUs(inMemory.compared);
  const floorCpu = totalCpuUs(floor);
  const reason =
    "each round trip is HTTP in, the accept script (which also takes the waiting leases), an XREADGROUP wake-up of " +
    "the actor and the claim script (unless the end of a run before it found the entry and claimed it), and one end " +
    "script from the actor (which acks the queue entry, gives the leases back and publishes the finished task to " +
    "the waiting gateway): up to four Redis round trips and a pub/sub message across three processes, where the SDK " +
    "runs the echo in its own event loop";
  return {
    id: "blocking",
    title: BLOCKING_TITLE,
    setup: [
      `${BLOCKING_CLIENTS} keep-alive connections, one blocking SendMessage in flight each (text "hello", answered COMPLETED with the echoed artifact).`,
      `Bounds per round: ${fmt(load.warmupRequests)} warm-up requests, then at most ${fmt(load.maxRequests)} requests or ${load.maxSeconds} s; ${rounds} round(s) per system, alternating; rounds pooled.`,
      `Ours: one gateway (server.maxWaitingRequests ${BLOCKING_CLIENTS * 2}) and \`work --actors ${BLOCKING_ACTORS}\` with worker.concurrency ${BLOCKING_CONCURRENCY}, so every client's run can be in flight at once; every task is durable in Redis before the gateway waits.`,
      "Ours with Redis over its Unix socket: the same installation with redis.url unix:///…/redis.sock (the same redis-server, which listens on both), as on a host that runs Redis beside the runtime; the first row, over TCP on loopback, is the figure the targets judge.",
      `Ours over gRPC: the same installation with server.grpcPort set, the same requests as SendMessageRequest messages (tenant \`echo\`), ${BLOCKING_CLIENTS} calls in flight on one HTTP/2 channel.`,
      "Peers: the SDK server with an executor that publishes the task, WORKING, the echoed artifact and COMPLETED in-process (no separate worker), with each task store; the faster runtime is the store's peer in the ratios.",
      ...DURABLE_PEERS_SETUP,
      ONE_CLIENT_SETUP,
      "CPU per request compares all the processes of a system: ours gateway + supervisor + actors + redis-server, a peer its server process (+ PostgreSQL's processes; + redis-server, which it does not use: ~0).",
    ],
    rows,
    targets: [
      {
        text: BLOCKING_TARGETS[0] ?? "",
        measured: ratioText(perSecond, inMemory, "round trips/s"),
        met: vsPeer >= 1,
        ...(vsPeer < 1 ? { why: `${((1 - vsPeer) * 100).toFixed(0)}% short: ${reason}.` } : {}),
      },
      {
        text: BLOCKING_TARGETS[1] ?? "",
        measured: `${fmt(ourCpu)} µs (gateway + actors ${fmt(ours.serverCpuPerRequestUs)}, redis-server ${fmt(ours.redisCpuPerRequestUs)}) vs ${fmt(peerCpu)} µs, ${inMemory.row.system}`,
        met: ourCpu <= peerCpu,
        ...(ourCpu > peerCpu
          ? {
              why:
                `${(ourCpu / peerCpu).toFixed(1)}× the peer's: ${reason}. The same processes and hops with no other ` +
                `work (the floor row) cost ${fmt(floorCpu)} µs per round trip (${fmt(floor.serverCpuPerRequestUs)} in ` +
                `its gateway and worker, ${fmt(floor.redisCpuPerRequestUs)} in redis-server): ${floorCpu >= peerCpu ? "more than" : `${fmt((100 * floorCpu) / peerCpu)}% of`} the peer's whole round trip`,
            }
          : {}),
      },
      {
        text: BLOCKING_TARGETS[2] ?? "",
        measured: `max ${ms(max)} ms = ${(max / p50).toFixed(1)}× p50 ${ms(p50)} ms (${inMemory.row.system}: max ${ms(inMemory.compared.summary.max)} ms = ${(inMemory.compared.summary.max / inMemory.compared.summary.p50).toFixed(1)}× p50)`,
        met: max <= 10 * p50,
        ...(max > 10 * p50
          ? {
              why: `${ms(max - 10 * p50)} ms over: on 2 shared cores the tail collects GC pauses, scheduling and every stall of the three processes and redis-server on the path; p99.9 ${ms(ours.summary.p999)} ms.`,
            }
          : {}),
      },
    ],
    figures: [
      ...peerFigures(comparison, "round trips/s"),
      oneClient.figure,
      [
        "ours with Redis over its Unix socket ÷ SDK with InMemoryTaskStore",
        `${ratioText(overSocket.summary.perSecond, inMemory, "round trips/s")}; CPU per request (all processes + redis-server): ours ${fmt(totalCpuUs(overSocket))} µs (over TCP ${fmt(ourCpu)} µs) vs ${fmt(peerCpu)} µs`,
      ],
    ],
    notes: comparison.notes,
  };
}
