// Scenario 6, streamed output: LLM-like answers of 1 KiB to 1 MiB, produced in 20-byte deltas by a bench handler (one
// emit.text per delta) and read by a client with SendStreamingMessage. Per answer size: bytes and commands sent to
// Redis per output byte, Redis memory after completion, wall time and CPU of gateway, actors and redis-server.
// Not part of the default run: BENCH_STREAMING_PAUSE_MS paces the deltas (a pause after each, as a model streams) and
// BENCH_STREAMING_WRITE_INTERVAL_MS sets the profile's artifactWriteIntervalMs.
import type { Redis } from "ioredis";
import { parseSse } from "../../src/client/sse-parser.ts";
import { DELTA_BYTES } from "./bench-handlers.ts";
import { type BenchContext, pick } from "./context.ts";
import { Installation } from "./installation.ts";
import { type Child, childrenOf, cpuSeconds } from "./processes.ts";
import { bytes, fmt, type Section } from "./results.ts";

export const STREAMING_TITLE = "Streamed output: LLM-like answers in 20-byte deltas over SendStreamingMessage";
export const STREAMING_TARGETS = [
  "streaming: bytes written to Redis for the streamed output ≤ 3 per output byte at every answer size",
];
const HANDLERS = new URL("./bench-handlers.ts", import.meta.url).pathname;
const SIZES = [1024, 10 * 1024, 100 * 1024, 1024 * 1024];
const TERMINAL = /"state":"TASK_STATE_(COMPLETED|FAILED|CANCELED|REJECTED)"/;
const MAX_RATIO = 3;

interface RedisCounters {
  inBytes: number;
  outBytes: number;
  commands: number;
  usedMemory: number;
}

async function counters(redis: Redis): Promise<RedisCounters> {
  const info = `${await redis.info("stats")}\n${await redis.info("memory")}`;
  const num = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, "m").exec(info)?.[1] ?? Number.NaN);
  return {
    inBytes: num("total_net_input_bytes"),
    outBytes: num("total_net_output_bytes"),
    commands: num("total_commands_processed"),
    usedMemory: num("used_memory"),
  };
}

/** "1 KiB", "10 KiB", "1 MiB". */
function sizeLabel(size: number): string {
  if (size === 0) return "empty";
  return size >= 1024 * 1024 ? `${size / 1024 / 1024} MiB` : `${size / 1024} KiB`;
}

/** What one streamed answer cost. */
interface Answer {
  size: number;
  received: number;
  events: number;
  seconds: number;
  /** Cut by the time bound (canceled), so `received` < `size`. */
  bounded: boolean;
  state: string;
  inBytes: number;
  outBytes: number;
  commands: number;
  usedMemory: number;
  /** MEMORY USAGE of the task's keys (task hash, run hash, journal stream) right after the terminal event. */
  taskKeysMemory: number;
  cpu: { gateway: number; actors: number; redis: number };
}

type Parts = { parts?: { text?: string }[] };

/**
 * The text bytes of an artifact update's parts, or of the artifacts of the opening task snapshot (which holds what
 * the actor wrote before the snapshot was read); "text" parts only, and the answer is ASCII, so characters = bytes.
 */
function textBytes(data: string): number {
  if (!data.includes('"artifactUpdate"') && !data.includes('"artifacts"')) return 0;
  const parsed = JSON.parse(data) as {
    result?: { artifactUpdate?: { artifact?: Parts }; task?: { artifacts?: Parts[] } };
  };
  const artifacts = parsed.result?.task?.artifacts ?? [parsed.result?.artifactUpdate?.artifact ?? {}];
  return artifacts.flatMap((artifact) => artifact.parts ?? []).reduce((sum, part) => sum + (part.text?.length ?? 0), 0);
}

async function streamOne(
  context: BenchContext,
  inst: Installation,
  port: number,
  pids: { gateway: number; work: number },
  size: number,
  boundSeconds: number,
  seq: number,
  pauseMs: number,
): Promise<Answer> {
  const headers = {
    "Content-Type": "application/json",
    "A2A-Version": "1.0",
    Authorization: `Bearer ${inst.apiKey}`,
  };
  const actorPids = () => [pids.work, ...childrenOf(pids.work)];
  const cpu = () => ({
    gateway: cpuSeconds(pids.gateway),
    actors: actorPids().reduce((sum, pid) => sum + cpuSeconds(pid), 0),
    redis: cpuSeconds(context.redisPid),
  });
  const before = await counters(inst.redis);
  const cpu0 = cpu();
  let taskId = "";
  let received = 0;
  let events = 0;
  let state = "";
  let last = "";
  let finish: () => void = () => {};
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const started = performance.now();
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: seq,
    method: "SendStreamingMessage",
    params: {
      message: {
        messageId: `streaming-${Date.now()}-${seq}`,
        role: "ROLE_USER",
        parts: [{ text: pauseMs > 0 ? `${size} ${pauseMs}` : String(size) }],
      },
    },
  });
  const onEvent = (data: string) => {
    events += 1;
    last = data;
    if (!taskId) taskId = /"task":\{"id":"([^"]+)"/.exec(data)?.[1] ?? /"taskId":"([^"]+)"/.exec(data)?.[1] ?? "";
    received += textBytes(data);
    const terminal = TERMINAL.exec(data);
    if (terminal && data.includes('"statusUpdate"')) {
      state = terminal[1] ?? "";
      finish();
    }
  };
  // One stream at a time: fetch and the client's own SSE parser (the 10,000-streams scenario needs raw sockets).
  const reading = new AbortController();
  const response = await fetch(`http://127.0.0.1:${port}/a2a/stream`, {
    method: "POST",
    headers: { ...headers, Accept: "text/event-stream" },
    body,
    signal: reading.signal,
  });
  const consumed = (async () => {
    if (!response.body) return;
    for await (const event of parseSse(response.body)) onEvent(event.data);
  })()
    .catch(() => {})
    .finally(() => finish());
  let bounded = false;
  try {
    if (response.status !== 200) throw new Error(`SendStreamingMessage answered HTTP ${response.status}`);
    const timer = new Promise<"bound">((resolve) => setTimeout(() => resolve("bound"), boundSeconds * 1000));
    if ((await Promise.race([finished, timer])) === "bound") {
      bounded = true;
      context.log(`  ${sizeLabel(size)}: time bound of ${boundSeconds} s reached at ${bytes(received)}; canceling`);
      await fetch(`http://127.0.0.1:${port}/a2a/stream`, {
        method: "POST",
        headers,
        body: JSON.stringify({ jsonrpc: "2.0", id: seq, method: "CancelTask", params: { id: taskId } }),
      });
      const grace = new Promise<"late">((resolve) => setTimeout(() => resolve("late"), 60_000));
      if ((await Promise.race([finished, grace])) === "late") throw new Error("the canceled stream did not end");
    }
  } finally {
    reading.abort();
    await consumed;
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu1 = cpu();
  const after = await counters(inst.redis);
  const keys = [inst.keys.task(0, taskId), inst.keys.run(0, taskId), inst.keys.journal(0, taskId)];
  let taskKeysMemory = 0;
  for (const key of keys) {
    taskKeysMemory += Number((await inst.redis.call("MEMORY", "USAGE", key, "SAMPLES", "0")) ?? 0);
  }
  if (!bounded && (state !== "COMPLETED" || received !== size)) {
    const lastEvent = last.length > 400 ? `${last.slice(0, 400)}…` : last;
    throw new Error(
      `the ${size}-byte answer ended ${state || "without a terminal event"} with ${received} bytes after ${events} ` +
        `events (task ${taskId || "unknown"}); the last event: ${lastEvent || "none"}`,
    );
  }
  return {
    size,
    received,
    events,
    seconds,
    bounded,
    state,
    inBytes: after.inBytes - before.inBytes,
    outBytes: after.outBytes - before.outBytes,
    commands: after.commands - before.commands,
    usedMemory: after.usedMemory - before.usedMemory,
    taskKeysMemory,
    cpu: { gateway: cpu1.gateway - cpu0.gateway, actors: cpu1.actors - cpu0.actors, redis: cpu1.redis - cpu0.redis },
  };
}

/** Several answers of one size as their mean (the bytes are the same each time; time and CPU vary). */
function mean(answers: Answer[]): Answer {
  const first = answers[0]!;
  const avg = (pick: (answer: Answer) => number) => answers.reduce((sum, a) => sum + pick(a), 0) / answers.length;
  return {
    ...first,
    received: avg((a) => a.received),
    events: avg((a) => a.events),
    seconds: avg((a) => a.seconds),
    bounded: answers.some((a) => a.bounded),
    inBytes: avg((a) => a.inBytes),
    outBytes: avg((a) => a.outBytes),
    commands: avg((a) => a.commands),
    usedMemory: avg((a) => a.usedMemory),
    taskKeysMemory: avg((a) => a.taskKeysMemory),
    cpu: { gateway: avg((a) => a.cpu.gateway), actors: avg((a) => a.cpu.actors), redis: avg((a) => a.cpu.redis) },
  };
}

export async function streamingScenario(context: BenchContext): Promise<Section> {
  const boundSeconds = pick(context, 120, 30);
  const repeats = (size: number) => (size <= 10 * 1024 ? pick(context, 5, 2) : 1);
  const pauseMs = Number(process.env.BENCH_STREAMING_PAUSE_MS ?? 0);
  const intervalMs = Number(process.env.BENCH_STREAMING_WRITE_INTERVAL_MS ?? 0);
  // at a model's pace a 100 KiB answer takes minutes: the paced variant measures the sizes that finish in seconds
  const sizes = pauseMs > 0 ? SIZES.filter((size) => size <= 10 * 1024) : SIZES;
  const inst = new Installation(context.redisUrl, {
    profiles: { stream: "stream-deltas" },
    profileFields: intervalMs > 0 ? { artifactWriteIntervalMs: intervalMs } : {},
    handlers: HANDLERS,
    env: { A2A_CLIENTS_MAX_STORED_BYTES: "0", A2A_SERVER_STREAM_MAX_SECONDS: String(boundSeconds + 120) },
  });
  let gateway: Child | undefined;
  let work: Child | undefined;
  const results: Answer[] = [];
  /** The same task with an empty answer: what a task costs besides its output, measured in the same run. */
  let baseline: Answer | undefined;
  try {
    await inst.addClient();
    work = await inst.work(1);
    const started = await inst.gateway();
    gateway = started.child;
    const pids = { gateway: started.child.pid, work: work.pid };
    let seq = 0;
    // Warm-up, not counted: the first requests load the scripts into Redis (their source is sent once) and warm the
    // processes, which would otherwise be charged to the first answer measured.
    for (const size of [0, sizes[0]!]) {
      seq += 1;
      await streamOne(context, inst, started.port, pids, size, boundSeconds, seq, pauseMs);
    }
    for (const size of [0, ...sizes]) {
      const answers: Answer[] = [];
      for (let i = 0; i < repeats(size); i++) {
        seq += 1;
        answers.push(await streamOne(context, inst, started.port, pids, size, boundSeconds, seq, pauseMs));
      }
      const answer = mean(answers);
      if (size === 0) {
        baseline = answer;
        continue;
      }
      context.log(
        `streaming: ${sizeLabel(size)} in ${answer.seconds.toFixed(1)} s, ${(answer.inBytes / Math.max(1, answer.received)).toFixed(1)} bytes to Redis per output byte${answer.bounded ? " (bounded)" : ""}`,
      );
      results.push(answer);
    }
  } finally {
    await gateway?.stop();
    await work?.stop(30_000);
    await inst.close();
  }
  const ratio = (answer: Answer) => answer.inBytes / Math.max(1, answer.received);
  const base = baseline ?? results[0]!;
  /** Bytes to Redis per output byte for the output alone: the empty answer's bytes taken off. */
  const streamed = (answer: Answer) => Math.max(0, answer.inBytes - base.inBytes) / Math.max(1, answer.received);
  const worst = results.reduce((top, answer) => (streamed(answer) > streamed(top) ? answer : top));
  const met = results.every((answer) => streamed(answer) <= MAX_RATIO);
  const bounded = results.filter((answer) => answer.bounded);
  const label = (answer: Answer) =>
    `${sizeLabel(answer.size)}${answer.bounded ? ` (bounded at ${bytes(answer.received)})` : ""}`;
  const first = results[0]!;
  const last = results.at(-1)!;
  // The cost per extra output byte between the smallest and the largest answer (constant for linear cost).
  const marginal = (last.inBytes - first.inBytes) / Math.max(1, last.received - first.received);
  const why =
    results.length > 1 && marginal <= MAX_RATIO
      ? `${streamed(worst).toFixed(1)} bytes per output byte at ${label(worst)} for the output alone: the cost per extra output byte is ${marginal.toFixed(1)} (linear), and the writer merges deltas at every size (${fmt(worst.events)} events for ${fmt(Math.ceil(worst.received / DELTA_BYTES))} deltas at ${label(worst)}, ${fmt(last.events)} for ${fmt(Math.ceil(last.received / DELTA_BYTES))} at ${label(last)}); what is left at ${label(worst)} is each update's own cost (a journal entry and a chunk append for a few deltas)`
      : `${streamed(worst).toFixed(0)} bytes per output byte at ${label(worst)}, ${(streamed(worst) / MAX_RATIO).toFixed(0)}× the target, and ${marginal.toFixed(1)} per extra output byte from ${label(first)} to ${label(last)}: the cost per byte grows with the answer`;
  return {
    id: "streaming",
    title: STREAMING_TITLE,
    setup: [
      `A bench handler (\`stream-deltas\` in test/load/bench-handlers.ts, loaded with \`work --handlers\`) emits the answer in ${DELTA_BYTES}-byte deltas of ASCII prose, one awaited \`ctx.emit.text\` per delta, as an LLM agent loop forwards a streamed completion; the client sends SendStreamingMessage with the size as its text and reads the SSE stream (fetch and the runtime's own client SSE parser) until the terminal status, counting the text bytes of the artifact updates (they must add up to the answer).`,
      ...(pauseMs > 0 || intervalMs > 0
        ? [
            `Paced variant: a ${pauseMs} ms pause after each delta (BENCH_STREAMING_PAUSE_MS), the profile's artifactWriteIntervalMs ${intervalMs} (BENCH_STREAMING_WRITE_INTERVAL_MS); answers of ${sizes.map(sizeLabel).join(" and ")}.`,
          ]
        : []),
      `One gateway and \`work --actors 1\`; one answer at a time, after an empty and a 1 KiB answer that are not counted (they load the scripts into Redis) (${repeats(1024)} answers each of 0 B, 1 KiB and 10 KiB, averaged; one of 100 KiB and 1 MiB). clients.maxStoredBytes is off (0) so that no per-client storage limit cuts a large answer.`,
      "Bytes written to Redis: INFO stats total_net_input_bytes (everything every client sent: the actor's scripts, the gateway's reads and lease renewals, the driver's INFO) from before the request to after the terminal event; commands: total_commands_processed over the same window (scripts count once). For the output alone: the same figure less that of an empty answer (the same request, handler and stream, no text), measured first in the same run: what a task costs besides its output (its accept, stream lease, claim and end step, each script call carrying 14 to 20 key names, and the installation's other traffic in the window). Redis memory after completion: MEMORY USAGE … SAMPLES 0 of the task hash, run hash and journal stream right after the terminal event, and used_memory growth.",
      `Bound: ${boundSeconds} s per answer; an answer still streaming then is canceled (CancelTask) and its figures cover the part that was produced.`,
    ],
    rows: [],
    tables: [
      {
        head: [
          "answer",
          "deltas (events) >",
          "output bytes >",
          "wall time s >",
          "bytes to Redis >",
          "per output byte >",
          "output alone, per output byte >",
          "commands >",
          "per delta >",
          "bytes from Redis >",
          "task keys in Redis after >",
          "used_memory growth >",
          "CPU s gateway / actors / redis-server >",
          "CPU ms per KiB >",
        ],
        rows: [base, ...results].map((answer) => {
          const deltas = Math.ceil(answer.received / DELTA_BYTES);
          const total = answer.cpu.gateway + answer.cpu.actors + answer.cpu.redis;
          return [
            label(answer),
            `${fmt(deltas)} (${fmt(answer.events)})`,
            fmt(answer.received),
            answer.seconds.toFixed(2),
            bytes(answer.inBytes),
            answer.received > 0 ? ratio(answer).toFixed(1) : "",
            answer.received > 0 ? streamed(answer).toFixed(1) : "(the baseline)",
            fmt(answer.commands),
            (answer.commands / Math.max(1, deltas)).toFixed(1),
            bytes(answer.outBytes),
            bytes(answer.taskKeysMemory),
            bytes(answer.usedMemory),
            `${answer.cpu.gateway.toFixed(2)} / ${answer.cpu.actors.toFixed(2)} / ${answer.cpu.redis.toFixed(2)}`,
            ((total * 1000) / Math.max(1, answer.received / 1024)).toFixed(1),
          ];
        }),
      },
    ],
    targets: [
      {
        text: STREAMING_TARGETS[0] ?? "",
        measured: `${results.map((answer) => `${label(answer)}: ${streamed(answer).toFixed(1)}`).join("; ")} (with the task's fixed ${bytes(base.inBytes)}: ${results.map((answer) => `${ratio(answer).toFixed(1)}`).join(", ")})`,
        met,
        ...(met
          ? {}
          : {
              why: `${why}${bounded.length > 0 ? `; ${bounded.map(label).join(", ")} did not finish within ${boundSeconds} s` : ""}.`,
            }),
      },
    ],
    figures: [
      [
        "growth of bytes to Redis per output byte, largest answer ÷ 1 KiB (1 = linear cost)",
        `${(ratio(last) / ratio(first)).toFixed(1)}×`,
      ],
      [
        "marginal bytes to Redis per extra output byte, from one size to the next (constant = linear cost; the fixed cost of a task drops out)",
        results
          .slice(1)
          .map((answer, i) => {
            const previous = results[i]!;
            const marginal = (answer.inBytes - previous.inBytes) / Math.max(1, answer.received - previous.received);
            return `${sizeLabel(previous.size)} → ${label(answer)}: ${marginal.toFixed(1)}`;
          })
          .join("; "),
      ],
    ],
    notes:
      bounded.length > 0
        ? [
            `${bounded.map(label).join(", ")}: stopped by the ${boundSeconds} s bound and canceled; the figures of that line cover the bytes produced until then.`,
          ]
        : [],
  };
}
