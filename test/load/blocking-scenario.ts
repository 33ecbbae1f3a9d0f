// Scenario 2, blocking round trip: SendMessage that waits for an `echo` run (gateway → Redis → actor → Redis →
// gateway) from 32 concurrent clients, against the @a2a-js/sdk server running the same echo in its own process.
import { cpuNote, peerRow } from "./accept-scenario.ts";
import { compare, type GatewaySetup, gatewayContender, type Load, sdkContender } from "./contenders.ts";
import { type BenchContext, pick } from "./context.ts";
import type { HttpAnswer } from "./http-load.ts";
import { sendMessageBody } from "./installation.ts";
import { fmt, ms, type Row, type Section } from "./results.ts";

export const BLOCKING_CLIENTS = 32;
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
  context.log("blocking: gateway + actors vs SDK server");
  const results = await compare(
    context,
    rounds,
    [
      gatewayContender(context, "gateway", blockingSetup()),
      sdkContender(context, "bun", "echo"),
      sdkContender(context, "node", "echo"),
    ],
    load,
  );
  const ours = results.get("gateway")!;
  const peers = [results.get("sdk-bun")!, results.get("sdk-node")!].map((peer) =>
    peerRow(peer, "round trips/s", "echo", "blocking"),
  );
  const rows: Row[] = [
    {
      system: `a2a-runtime gateway + \`work --actors ${BLOCKING_ACTORS}\` (echo)`,
      role: "ours",
      summary: ours.summary,
      unit: "round trips/s",
      errors: ours.summary.errors,
      command: "npm run bench -- --only blocking",
      note: `${cpuNote(ours)} (server = gateway + supervisor + actors)`,
    },
    ...peers,
  ];
  const { p50, p99 } = ours.summary;
  const bestPeer = peers.reduce((best, row) => (row.summary.p50 < best.summary.p50 ? row : best));
  const reason =
    "each round trip is HTTP in, the accept script, an XREADGROUP wake-up of the actor, claim + HGETALL + three " +
    "transition scripts + ack from the actor, a pub/sub notice and a snapshot read in the gateway: about nine Redis " +
    "round trips across three processes, which on 2 cores queue behind each other under 32 concurrent clients";
  return {
    id: "blocking",
    title: `2. Blocking round trip: SendMessage waiting for echo, ${BLOCKING_CLIENTS} concurrent clients`,
    setup: [
      `${BLOCKING_CLIENTS} keep-alive connections, one blocking SendMessage in flight each (text "hello", answered COMPLETED with the echoed artifact).`,
      `Bounds per round: ${fmt(load.warmupRequests)} warm-up requests, then at most ${fmt(load.maxRequests)} requests or ${load.maxSeconds} s; ${rounds} round(s) per system, alternating; rounds pooled.`,
      `Ours: one gateway (server.maxWaitingRequests ${BLOCKING_CLIENTS * 2}) and \`work --actors ${BLOCKING_ACTORS}\` with worker.concurrency ${BLOCKING_CONCURRENCY}, so every client's run can be in flight at once; every task is durable in Redis before the gateway waits.`,
      "Peer: the SDK server with an executor that publishes the task, WORKING, the echoed artifact and COMPLETED in-process (no durability, no separate worker).",
    ],
    rows,
    targets: [
      {
        text: "blocking round trip p50 ≤ 5 ms",
        measured: `${ms(p50)} ms (SDK peer: ${ms(bestPeer.summary.p50)} ms)`,
        met: p50 <= 5,
        ...(p50 > 5 ? { why: `${ms(p50 - 5)} ms over: ${reason}.` } : {}),
      },
      {
        text: "blocking round trip p99 ≤ 25 ms",
        measured: `${ms(p99)} ms (SDK peer: ${ms(bestPeer.summary.p99)} ms)`,
        met: p99 <= 25,
        ...(p99 > 25 ? { why: `${ms(p99 - 25)} ms over: ${reason}; the tail adds GC pauses and scheduling.` } : {}),
      },
    ],
    figures: [
      [
        "ours ÷ best SDK peer (throughput)",
        `${(ours.summary.perSecond / Math.max(...peers.map((row) => row.summary.perSecond))).toFixed(2)}×`,
      ],
    ],
    notes: [],
  };
}
