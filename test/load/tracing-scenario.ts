// Scenario 8, tracing cost: the accept and blocking loads of scenarios 1 and 2 against our gateway with tracing off
// (the default: no provider, the API's no-op spans) and on with every trace sampled, exporting over OTLP/HTTP to a
// loopback receiver that counts the spans. Rounds alternate between the two; the cost is per request.
import { startOtlpReceiver } from "../support/otlp-receiver.ts";
import { acceptLoad } from "./accept-scenario.ts";
import { blockingLoad, blockingSetup } from "./blocking-scenario.ts";
import { type Compared, compare, cpuNote, type GatewaySetup, gatewayContender, type Load } from "./contenders.ts";
import { type BenchContext, pick } from "./context.ts";
import { fmt, ms, type Row, type Section } from "./results.ts";

export const TRACING_TITLE = "Tracing cost: accept and blocking with tracing off and on (100% sampled)";

interface Case {
  name: string;
  setup: GatewaySetup;
  load: Load;
  unit: string;
}

function withTracing(setup: GatewaySetup, endpoint: string): GatewaySetup {
  const env = {
    ...setup.env,
    A2A_TRACING_ENABLED: "true",
    A2A_TRACING_ENDPOINT: endpoint,
    A2A_TRACING_SAMPLING_RATIO: "1",
  };
  return { ...setup, env };
}

/** The difference on − off per request: time at the measured concurrency, and server CPU. */
function cost(off: Compared, on: Compared, concurrency: number): string {
  const timeUs = (concurrency / on.summary.perSecond - concurrency / off.summary.perSecond) * 1e6;
  const cpuUs = on.serverCpuPerRequestUs - off.serverCpuPerRequestUs;
  const rate = (on.summary.perSecond / off.summary.perSecond - 1) * 100;
  return (
    `server CPU ${fmt(cpuUs)} µs per request (${fmt(off.serverCpuPerRequestUs)} → ${fmt(on.serverCpuPerRequestUs)}); ` +
    `throughput ${rate >= 0 ? "+" : ""}${fmt(rate, 1)}%; p50 ${ms(off.summary.p50)} → ${ms(on.summary.p50)}; ` +
    `${fmt(timeUs)} µs of a client's round trip`
  );
}

export async function tracingScenario(context: BenchContext): Promise<Section> {
  const receiver = startOtlpReceiver({ keep: false });
  const rounds = pick(context, 3, 1);
  const cases: Case[] = [
    { name: "accept", setup: { profile: "noop", actors: 0 }, load: acceptLoad(context), unit: "accepts/s" },
    { name: "blocking", setup: blockingSetup(), load: blockingLoad(context), unit: "round trips/s" },
  ];
  const rows: Row[] = [];
  const figures: [string, string][] = [];
  try {
    for (const { name, setup, load, unit } of cases) {
      const before = receiver.count;
      const off = gatewayContender(context, `${name} tracing off`, setup);
      const on = gatewayContender(context, `${name} tracing on`, withTracing(setup, receiver.url));
      const compared = await compare(context, rounds, [off, on], load);
      const offResult = compared.get(off.name);
      const onResult = compared.get(on.name);
      if (!offResult || !onResult) throw new Error(`${name}: a contender did not run`);
      for (const [result, label] of [
        [offResult, "off (default)"],
        [onResult, "on, sampling 1.0, OTLP/HTTP to a loopback receiver"],
      ] as const) {
        rows.push({
          system: `${name}: tracing ${label}`,
          role: result === offResult ? "reference" : "ours",
          summary: result.summary,
          unit,
          errors: result.summary.errors,
          command: "npm run bench -- --only tracing",
          note: cpuNote(result),
        });
      }
      figures.push([`${name}: cost of tracing at 100% sampling`, cost(offResult, onResult, load.concurrency)]);
      figures.push([`${name}: spans received`, fmt(receiver.count - before)]);
    }
  } finally {
    receiver.stop();
  }
  return {
    id: "tracing",
    title: TRACING_TITLE,
    setup: [
      "The loads of scenarios 1 (accept, 64 clients, profile noop, no actors) and 2 (blocking echo, 32 clients, one actor).",
      "Off: tracing.enabled false (the default): no tracer provider, the OpenTelemetry API's no-op spans.",
      "On: tracing.enabled true, samplingRatio 1, the SDK's batch span processor exporting OTLP/HTTP (JSON) to a receiver on loopback in the bench process, which counts the spans.",
      `${rounds} round(s) per setting, alternating; rounds pooled.`,
    ],
    rows,
    targets: [],
    figures,
    notes: [
      "Server CPU counts the gateway (and, for blocking, the supervisor and its actor), so it includes the export of the spans.",
    ],
  };
}
