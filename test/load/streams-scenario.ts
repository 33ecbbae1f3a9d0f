// Scenario 4, streams: as many concurrent SubscribeToTask streams as one gateway holds (up to 10,000; quick: 1,000),
// two per task, while a producer in this process writes WORKING events through RunLedger as an actor would (each event
// carries its send time in metadata). Reports RSS growth per stream, Redis connections, and append → receipt lag.
import { Redis } from "ioredis";
import { type Claim, QUEUE_GROUP, RunLedger, TaskJournal } from "../../src/journal/index.ts";
import { type BenchContext, pick } from "./context.ts";
import { Installation } from "./installation.ts";
import { type Child, cpuSeconds, rssBytes } from "./processes.ts";
import { bytes, fmt, notMeasured, type Section } from "./results.ts";
import { type SseSubscription, subscribe } from "./sse-client.ts";
import { summarize } from "./stats.ts";

const STREAMS_PER_TASK = 2;
export const STREAMS_TITLE = "Streams: concurrent SubscribeToTask streams on one gateway";
export const STREAMS_TARGETS = ["10,000 concurrent streams on one gateway", "event lag p99 ≤ 100 ms"];
const SENT_AT = /"sentAt":([0-9.]+)/;

type StreamReply = [string, [string, string[]][]][] | null;

async function acceptTasks(inst: Installation, count: number): Promise<void> {
  const connections = Array.from({ length: 8 }, () => new Redis(inst.redisUrl));
  let issued = 0;
  await Promise.all(
    connections.map(async (redis) => {
      const journal = new TaskJournal(redis, inst.keys, {
        livenessSeconds: 3600,
        dedupSeconds: 3600,
        retryAfterSeconds: 5,
      });
      while (issued < count) {
        issued += 1;
        const message = { messageId: `streams-${issued}`, role: "ROLE_USER" as const, parts: [{ text: "hello" }] };
        await journal.accept({ clientId: inst.clientId, profile: "echo", profileQuota: 0, message });
      }
    }),
  );
  for (const redis of connections) redis.disconnect();
}

/** Reads every queued run with the actors' consumer group and claims it, as an actor does before writing. */
async function claimAll(inst: Installation, ledger: RunLedger, count: number): Promise<Claim[]> {
  await ledger.ensureGroup(0);
  const claims: Claim[] = [];
  const queue = inst.keys.queue(0);
  while (claims.length < count) {
    const reply = (await inst.redis.call(
      "XREADGROUP",
      "GROUP",
      QUEUE_GROUP,
      "bench-producer",
      "COUNT",
      1000,
      "STREAMS",
      queue,
      ">",
    )) as StreamReply;
    const rows = reply?.[0]?.[1] ?? [];
    if (rows.length === 0) break;
    for (const [entryId, fields] of rows) {
      const taskId = fields[fields.indexOf("task") + 1] ?? "";
      const claim = await ledger.claim(0, taskId, entryId, "bench-producer", 600_000, 3);
      if (typeof claim !== "string") claims.push(claim);
    }
  }
  return claims;
}

export async function streamsScenario(context: BenchContext): Promise<Section> {
  const wanted = pick(context, 10_000, 1_000);
  const tasks = Math.ceil(wanted / STREAMS_PER_TASK);
  const rate = Number(process.env.BENCH_STREAM_RATE ?? pick(context, 500, 200));
  const produceSeconds = pick(context, 10, 5);
  const inst = new Installation(context.redisUrl, {
    env: {
      A2A_SERVER_MAX_STREAMS_PER_CLIENT: String(wanted + 100),
      A2A_SERVER_MAX_STREAMS_PER_INSTALLATION: String(wanted + 100),
    },
  });
  const subscriptions: SseSubscription[] = [];
  let gateway: Child | undefined;
  const beat = setInterval(() => void inst.seedLiveBeat().catch(() => {}), 10_000);
  try {
    await inst.addClient();
    await inst.seedLiveBeat();
    context.log(`streams: ${fmt(tasks)} tasks for ${fmt(wanted)} streams`);
    await acceptTasks(inst, tasks);
    const ledger = new RunLedger(inst.redis, inst.keys);
    const claims = await claimAll(inst, ledger, tasks);
    const started = await inst.gateway();
    gateway = started.child;
    const headers = {
      "Content-Type": "application/json",
      "A2A-Version": "1.0",
      Authorization: `Bearer ${inst.apiKey}`,
    };
    const body = (taskId: string, id: number) =>
      JSON.stringify({ jsonrpc: "2.0", id, method: "SubscribeToTask", params: { id: taskId } });

    // Probe: is SubscribeToTask served as a stream at all?
    let probeEvent = "";
    const probe = await subscribe(
      started.port,
      "/a2a/echo",
      headers,
      body(claims[0]?.taskId ?? "", 0),
      (data) => {
        probeEvent ||= data;
      },
      () => {},
    );
    const probeStatus = await Promise.race([probe.opened, Bun.sleep(5000).then(() => 0)]);
    await Bun.sleep(200);
    probe.close();
    if (probeStatus !== 200 || !probeEvent.includes('"task"')) {
      return notMeasured(
        "streams",
        STREAMS_TITLE,
        "streams not yet available (SubscribeToTask did not answer with an SSE stream)",
        STREAMS_TARGETS,
      );
    }
    await Bun.sleep(500);
    const rssBefore = rssBytes(started.child.pid);

    const lags: number[] = [];
    let snapshots = 0;
    let closedEarly = 0;
    let measuring = true;
    const onEvent = (data: string) => {
      const sent = SENT_AT.exec(data);
      if (sent) lags.push(performance.now() - Number(sent[1]));
      else if (data.includes('"result":{"task"')) snapshots += 1;
    };
    const onClose = () => {
      if (measuring) closedEarly += 1;
    };
    context.log(`streams: opening ${fmt(wanted)} streams`);
    const openDeadline = performance.now() + pick(context, 90_000, 20_000);
    let refused = 0;
    for (let i = 0; i < wanted && performance.now() < openDeadline; i += 200) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(200, wanted - i) }, (_, j) =>
          subscribe(
            started.port,
            "/a2a/echo",
            headers,
            body(claims[(i + j) % claims.length]?.taskId ?? "", i + j + 1),
            onEvent,
            onClose,
          ),
        ),
      );
      const statuses = await Promise.all(batch.map((subscription) => subscription.opened));
      refused += statuses.filter((status) => status !== 200).length;
      subscriptions.push(...batch);
    }
    await Bun.sleep(1000);
    const open = subscriptions.length - refused - closedEarly;
    const rssAfter = rssBytes(started.child.pid);
    const clientList = String(await inst.redis.call("CLIENT", "LIST"));
    const redisConnections = clientList.trim().split("\n").length;
    const gatewayConnections = clientList.split("\n").filter((line) => / name=a2a-gateway/.test(line)).length;

    context.log(`streams: ${fmt(open)} open; producing ${rate} events/s for ${produceSeconds} s`);
    let produced = 0;
    const gatewayCpu0 = cpuSeconds(started.child.pid);
    const driverCpu0 = process.cpuUsage();
    const produceUntil = performance.now() + produceSeconds * 1000;
    const startedAt = performance.now();
    while (performance.now() < produceUntil) {
      const due = Math.floor(((performance.now() - startedAt) / 1000) * rate) - produced;
      const writes: Promise<unknown>[] = [];
      for (let k = 0; k < due; k++) {
        const claim = claims[produced % claims.length];
        produced += 1;
        if (!claim) continue;
        const sentAt = performance.now();
        const status = { state: "TASK_STATE_WORKING" as const, timestamp: new Date().toISOString() };
        writes.push(
          ledger.transition({
            claim,
            kind: "status",
            state: "TASK_STATE_WORKING",
            status,
            event: { statusUpdate: { taskId: claim.taskId, contextId: "", status, metadata: { sentAt } } },
            retentionSeconds: 3600,
            journalRetentionSeconds: 600,
          }),
        );
      }
      await Promise.all(writes);
      await Bun.sleep(5);
    }
    const gatewayCpu = cpuSeconds(started.child.pid) - gatewayCpu0;
    const driverUsage = process.cpuUsage(driverCpu0);
    const driverCpu = (driverUsage.user + driverUsage.system) / 1e6;
    await Bun.sleep(2000);
    measuring = false;
    const lag = summarize(lags, produceSeconds);
    const expected = produced * STREAMS_PER_TASK;
    const perStream = (rssAfter - rssBefore) / Math.max(1, open);
    const reached = open >= 10_000;
    return {
      id: "streams",
      title: STREAMS_TITLE,
      setup: [
        `${fmt(wanted)} SubscribeToTask streams (${STREAMS_PER_TASK} per task, ${fmt(tasks)} tasks) from one client (server.maxStreamsPerClient and maxStreamsPerInstallation raised to ${fmt(wanted + 100)}), opened 200 at a time on raw loopback sockets; bound ${pick(context, 90, 20)} s to open them.`,
        `Producer: in the driver, ${rate} WORKING status events per second for ${produceSeconds} s through RunLedger.transition with each run's claim, as an actor writes them; each event carries performance.now() in its metadata, and the lag is measured in the same process at receipt (append → gateway notice → journal read → SSE frame → client).`,
        "Memory per stream: the gateway's RSS after opening the streams minus before, divided by the streams open. No peer is measured for this scenario.",
      ],
      rows: [
        {
          system: `a2a-runtime gateway, ${fmt(open)} open streams`,
          role: "ours",
          summary: lag,
          unit: "events received/s",
          errors: Math.max(0, expected - lags.length),
          command: "npm run bench -- --only streams",
          note: `latencies are append → receipt lag; ${fmt(lags.length)} of ${fmt(expected)} expected events received`,
        },
      ],
      targets: [
        {
          text: STREAMS_TARGETS[0] ?? "",
          measured: `${fmt(open)} streams open of ${fmt(wanted)} tried (${fmt(refused)} refused, ${fmt(closedEarly)} closed early; ${fmt(snapshots)} snapshots received)`,
          met: context.quick ? undefined : reached,
          ...(context.quick ? {} : reached ? {} : { why: `${fmt(10_000 - open)} streams short.` }),
        },
        {
          text: STREAMS_TARGETS[1] ?? "",
          measured: `p50 ${lag.p50.toFixed(1)} ms, p99 ${lag.p99.toFixed(1)} ms at ${fmt(open)} streams`,
          met: lag.count > 0 && lag.p99 <= 100,
          ...(lag.p99 > 100 ? { why: `${(lag.p99 - 100).toFixed(0)} ms over.` } : {}),
        },
      ],
      figures: [
        ["gateway RSS before / after opening the streams", `${bytes(rssBefore)} / ${bytes(rssAfter)}`],
        ["memory per stream (RSS growth ÷ open streams)", bytes(perStream)],
        [
          "Redis connections (CLIENT LIST, whole server) / of them the gateway's",
          `${redisConnections} / ${gatewayConnections}`,
        ],
        ["events produced / frames expected / received", `${fmt(produced)} / ${fmt(expected)} / ${fmt(lags.length)}`],
        [
          `CPU while producing (${produceSeconds} s): gateway / driver (producer + ${fmt(open)} SSE clients)`,
          `${gatewayCpu.toFixed(1)} s / ${driverCpu.toFixed(1)} s`,
        ],
      ],
      notes: context.quick ? ["Quick run: 1,000 streams; the 10,000-stream target is judged by full runs only."] : [],
    };
  } finally {
    clearInterval(beat);
    for (const subscription of subscriptions) subscription.close();
    await gateway?.stop();
    await inst.close();
  }
}
