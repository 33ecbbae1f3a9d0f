// Scenario 8, durable acknowledgements: the accept and the blocking round trip with redis.ackReplicas 0 and 1, on the
// bench's redis-server with a replica of it that this scenario starts on loopback (WAIT 1 after every acknowledged
// write). Rounds alternate between the two settings.
import { startRedis } from "../support/redis.ts";
import { acceptLoad } from "./accept-scenario.ts";
import { blockingLoad, blockingSetup } from "./blocking-scenario.ts";
import { type GatewaySetup, gatewayContender, type Load, type Measured } from "./contenders.ts";
import { type BenchContext, pick } from "./context.ts";
import { waitFor } from "./processes.ts";
import { fmt, ms, type Row, type Section } from "./results.ts";
import { mergeSamples } from "./stats.ts";

export const DURABILITY_TITLE = "Durable acknowledgements: accept and blocking with redis.ackReplicas 0 and 1";
const ACK_TIMEOUT_MS = 1000;

interface Pooled {
  summary: ReturnType<typeof mergeSamples>;
  serverCpuUs: number;
  redisCpuUs: number;
  firstError: string | undefined;
}

function pooled(samples: Measured[]): Pooled {
  const summary = mergeSamples(samples);
  const requests = Math.max(1, summary.count);
  const sum = (pick: (m: Measured) => number) => samples.reduce((total, m) => total + pick(m), 0);
  return {
    summary,
    serverCpuUs: (sum((m) => m.serverCpu) / requests) * 1e6,
    redisCpuUs: (sum((m) => m.redisCpu) / requests) * 1e6,
    firstError: samples.find((m) => m.firstError)?.firstError,
  };
}

/** The same setup with redis.ackReplicas set. */
function withAck(setup: GatewaySetup, ackReplicas: number): GatewaySetup {
  return {
    ...setup,
    env: {
      ...setup.env,
      A2A_REDIS_ACK_REPLICAS: String(ackReplicas),
      A2A_REDIS_ACK_TIMEOUT_MS: String(ACK_TIMEOUT_MS),
    },
  };
}

async function compare(
  context: BenchContext,
  name: string,
  setup: GatewaySetup,
  load: Load,
  rounds: number,
): Promise<[Pooled, Pooled]> {
  const samples: [Measured[], Measured[]] = [[], []];
  for (let round = 0; round < rounds; round++) {
    for (const ack of [0, 1] as const) {
      context.log(`durability: ${name} ackReplicas ${ack}, round ${round + 1}/${rounds}`);
      samples[ack].push(await gatewayContender(context, `${name}-ack${ack}`, withAck(setup, ack)).run(load));
    }
  }
  return [pooled(samples[0]), pooled(samples[1])];
}

function row(system: string, unit: string, result: Pooled, only: string): Row {
  const error = result.firstError ? `; first error: ${result.firstError.slice(0, 160)}` : "";
  return {
    system,
    role: "ours",
    summary: result.summary,
    unit,
    errors: result.summary.errors,
    command: `npm run bench -- --only ${only}`,
    note: `CPU per request: server ${fmt(result.serverCpuUs)} µs, redis-server (primary) ${fmt(result.redisCpuUs)} µs${error}`,
  };
}

/** The cost of ackReplicas 1 against 0, as "−12% throughput, p50 +0.2 ms". */
function cost(without: Pooled, withAck: Pooled): string {
  const rate = (withAck.summary.perSecond / without.summary.perSecond - 1) * 100;
  const p50 = withAck.summary.p50 - without.summary.p50;
  return `${rate >= 0 ? "+" : ""}${rate.toFixed(0)}% throughput, p50 ${p50 >= 0 ? "+" : ""}${p50.toFixed(2)} ms, p99 ${ms(withAck.summary.p99)} vs ${ms(without.summary.p99)}`;
}

export async function durabilityScenario(context: BenchContext): Promise<Section> {
  const primaryPort = Number(new URL(context.redisUrl).port);
  const replica = await startRedis({ replicaOf: primaryPort });
  const admin = replica.client();
  try {
    await waitFor(
      async () => (await admin.info("replication")).includes("master_link_status:up") || undefined,
      15_000,
      "the replica in sync",
    );
    const rounds = pick(context, 2, 1);
    const accept = await compare(context, "accept", { profile: "noop", actors: 0 }, acceptLoad(context), rounds);
    const blocking = await compare(context, "blocking", blockingSetup(), blockingLoad(context), rounds);
    const [accept0, accept1] = accept;
    const [blocking0, blocking1] = blocking;
    return {
      id: "durability",
      title: DURABILITY_TITLE,
      setup: [
        "The loads of sections 1 and 2 (64 clients accepting, 32 clients waiting for echo), the same bounds and warm-up.",
        `A replica of the bench's redis-server on loopback (\`--replicaof\`); ackReplicas 1 sends WAIT 1 ${ACK_TIMEOUT_MS} after each accept on the gateway's connection (the writes whose replies arrived in one event-loop turn share one WAIT).`,
        `${rounds} round(s) per setting, alternating, each on a freshly started gateway; rounds pooled.`,
      ],
      rows: [
        row("accept, ackReplicas 0", "accepts/s", accept0, "durability"),
        row("accept, ackReplicas 1 (WAIT 1)", "accepts/s", accept1, "durability"),
        row("blocking, ackReplicas 0", "round trips/s", blocking0, "durability"),
        row("blocking, ackReplicas 1 (WAIT 1)", "round trips/s", blocking1, "durability"),
      ],
      targets: [],
      figures: [
        ["accept: ackReplicas 1 against 0", cost(accept0, accept1)],
        ["blocking: ackReplicas 1 against 0", cost(blocking0, blocking1)],
      ],
      notes: [
        "The replica shares the machine's cores with everything else here; over a network WAIT adds the round trip to the replica.",
      ],
    };
  } finally {
    admin.disconnect();
    await replica.stop();
  }
}
