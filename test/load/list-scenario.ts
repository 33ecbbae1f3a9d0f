// Scenario 7, ListTasks: one client with 100, 10,000 and 100,000 tasks (seeded through the public API: queued, and
// every tenth of the first 100 canceled); a few concurrent connections page through them (pageSize 50): the first page
// and a page in the middle of the list, with and without a status filter. Latency and CPU per request per size.
import { Redis } from "ioredis";
import { TaskJournal } from "../../src/journal/index.ts";
import { type BenchContext, pick } from "./context.ts";
import { type HttpAnswer, runHttpLoad } from "./http-load.ts";
import { Installation, sendMessageBody } from "./installation.ts";
import { type Child, cpuSeconds } from "./processes.ts";
import { fmt, ms, type Row, type Section } from "./results.ts";
import { summarize } from "./stats.ts";

export const LIST_TITLE = "ListTasks: 100, 10,000 and 100,000 tasks per client";
export const LIST_TARGETS = ["ListTasks latency flat from 100 to 100,000 tasks per client"];
const SIZES = [100, 10_000, 100_000];
const PAGE_SIZE = 50;
const CLIENTS = 4;
/**
 * Every FILTERED_EVERY-th task of the first size is canceled, and no later one: the status filter selects the same 10
 * tasks at every size (its pages are alike), and they sit behind every newer task.
 */
const FILTERED_EVERY = 10;
const FILTER = "TASK_STATE_CANCELED";
const PROFILE = "noop";
const PATH = `/a2a/${PROFILE}`;
/** "Flat": p50 and CPU per request at the largest size at most this many times those at the smallest. */
const FLAT_FACTOR = 2;

interface Case {
  name: string;
  filter: boolean;
  deep: boolean;
}

const CASES: Case[] = [
  { name: "first page", filter: false, deep: false },
  { name: "middle page", filter: false, deep: true },
  { name: `first page, status ${FILTER}`, filter: true, deep: false },
  { name: `middle page, status ${FILTER}`, filter: true, deep: true },
];

interface Measured {
  size: number;
  case: Case;
  /** Tasks each answer held. */
  expected: number;
  row: Row;
  p50: number;
  cpuUs: number;
}

/**
 * Seeds `count` more queued tasks through SendMessage (returnImmediately), then cancels every FILTERED_EVERY-th one
 * through CancelTask (a queued task is canceled at once). Returns the seconds it took.
 */
async function seed(inst: Installation, port: number, from: number, count: number): Promise<number> {
  const started = performance.now();
  const headers = { "Content-Type": "application/json", "A2A-Version": "1.0", Authorization: `Bearer ${inst.apiKey}` };
  const tag = `list-${Date.now()}`;
  const toCancel: string[] = [];
  const accepted = await runHttpLoad({
    port,
    path: PATH,
    concurrency: 32,
    maxRequests: count,
    maxSeconds: 600,
    warmupRequests: 0,
    headers,
    body: (seq) => sendMessageBody(seq, "hello", true, tag),
    check: (answer) => {
      if (answer.status !== 200) return false;
      const body = JSON.parse(answer.body) as { id?: number; result?: { task?: { id?: string } } };
      const taskId = body.result?.task?.id;
      if (taskId && from === 0 && (body.id ?? 0) % FILTERED_EVERY === 0) toCancel.push(taskId);
      return taskId !== undefined;
    },
  });
  if (accepted.errors > 0 || accepted.count !== count) {
    throw new Error(`seeding accepted ${accepted.count} of ${count} tasks: ${accepted.firstError ?? ""}`);
  }
  const canceled = await runHttpLoad({
    port,
    path: PATH,
    concurrency: 32,
    maxRequests: toCancel.length,
    maxSeconds: 600,
    warmupRequests: 0,
    headers,
    body: (seq) =>
      JSON.stringify({ jsonrpc: "2.0", id: seq, method: "CancelTask", params: { id: toCancel[seq - 1] ?? "" } }),
    check: (answer) => answer.status === 200 && answer.body.includes(FILTER),
  });
  if (canceled.errors > 0 || canceled.count !== toCancel.length) {
    throw new Error(`seeding canceled ${canceled.count} of ${toCancel.length} tasks: ${canceled.firstError ?? ""}`);
  }
  const total = await inst.redis.zcard(inst.keys.clientTasks(0, inst.clientId, PROFILE));
  if (total !== from + count) throw new Error(`the client's index holds ${total} tasks, expected ${from + count}`);
  return (performance.now() - started) / 1000;
}

/** The page token after the first `depth` matching tasks, from the journal's own list (what a client paging there holds). */
async function tokenAt(inst: Installation, depth: number, filter: boolean): Promise<string> {
  if (depth === 0) return "";
  const redis = new Redis(inst.redisUrl);
  try {
    const journal = new TaskJournal(redis, inst.keys, {
      livenessSeconds: 3600,
      dedupSeconds: 3600,
      retryAfterSeconds: 5,
    });
    // Walked in pages as a client walks (a filtered page examines a bounded number of tasks and may come back short).
    let token = "";
    for (let left = depth; left > 0; ) {
      const page = await journal.list(inst.clientId, {
        pageSize: Math.min(left, 1000),
        profile: PROFILE,
        ...(token ? { pageToken: token } : {}),
        ...(filter ? { status: FILTER } : {}),
      });
      left -= page.records.length;
      token = page.nextPageToken;
      if (token === "") break;
    }
    return token;
  } finally {
    redis.disconnect();
  }
}

async function measureCase(
  context: BenchContext,
  inst: Installation,
  gateway: { pid: number; port: number },
  size: number,
  listCase: Case,
): Promise<Measured> {
  const matching = listCase.filter ? (SIZES[0] ?? 0) / FILTERED_EVERY : size;
  const depth = listCase.deep ? Math.floor(matching / 2) : 0;
  const expected = Math.min(PAGE_SIZE, matching - depth);
  const pageToken = await tokenAt(inst, depth, listCase.filter);
  if (depth > 0 && pageToken === "") throw new Error(`no page token after ${depth} of ${matching} tasks`);
  const params = {
    pageSize: PAGE_SIZE,
    ...(pageToken ? { pageToken } : {}),
    ...(listCase.filter ? { status: FILTER } : {}),
  };
  const check = (answer: HttpAnswer) => {
    if (answer.status !== 200) return false;
    const body = JSON.parse(answer.body) as { result?: { tasks?: unknown[] } };
    return body.result?.tasks?.length === expected;
  };
  const load = {
    port: gateway.port,
    path: PATH,
    concurrency: CLIENTS,
    headers: { "Content-Type": "application/json", "A2A-Version": "1.0", Authorization: `Bearer ${inst.apiKey}` },
    body: (seq: number) => JSON.stringify({ jsonrpc: "2.0", id: seq, method: "ListTasks", params }),
    check,
  };
  await runHttpLoad({ ...load, maxRequests: pick(context, 4, 2) * CLIENTS, maxSeconds: 10, warmupRequests: 0 });
  const cpu0 = [cpuSeconds(gateway.pid), cpuSeconds(context.redisPid)];
  const result = await runHttpLoad({
    ...load,
    ...pick(context, { maxRequests: 3_000, maxSeconds: 10 }, { maxRequests: 600, maxSeconds: 3 }),
    warmupRequests: 0,
  });
  const requests = Math.max(1, result.count + result.errors);
  const gatewayUs = ((cpuSeconds(gateway.pid) - (cpu0[0] ?? 0)) / requests) * 1e6;
  const redisUs = ((cpuSeconds(context.redisPid) - (cpu0[1] ?? 0)) / requests) * 1e6;
  const summary = summarize(result.latencies, result.seconds);
  context.log(`  ${fmt(size)} tasks, ${listCase.name}: p50 ${ms(summary.p50)} ms, ${fmt(summary.count)} requests`);
  return {
    size,
    case: listCase,
    expected,
    p50: summary.p50,
    cpuUs: gatewayUs + redisUs,
    row: {
      system: `${fmt(size)} tasks: ${listCase.name} (${expected} of ${fmt(matching)} matching)`,
      role: "ours",
      summary,
      unit: "lists/s",
      errors: result.errors,
      command: "npm run bench -- --only list",
      note: `CPU per request: gateway ${fmt(gatewayUs)} µs, redis-server ${fmt(redisUs)} µs${result.firstError ? `; first error: ${result.firstError.slice(0, 160)}` : ""}`,
    },
  };
}

export async function listScenario(context: BenchContext): Promise<Section> {
  const inst = new Installation(context.redisUrl, {
    env: { A2A_CLIENTS_MAX_STORED_BYTES: "0", A2A_SERVER_STORE_TIMEOUT_SECONDS: "60" },
  });
  let gateway: Child | undefined;
  // no actor runs: the liveness record lets the gateway accept, and the tasks stay queued
  const beat = setInterval(() => void inst.seedLiveBeat().catch(() => {}), 10_000);
  const measured: Measured[] = [];
  const seeding: [string, string][] = [];
  try {
    await inst.addClient();
    await inst.seedLiveBeat();
    const started = await inst.gateway();
    gateway = started.child;
    let seeded = 0;
    for (const size of SIZES) {
      context.log(`list: seeding ${fmt(size - seeded)} tasks (to ${fmt(size)})`);
      const seconds = await seed(inst, started.port, seeded, size - seeded);
      seeding.push([
        `seeding ${fmt(seeded)} → ${fmt(size)} tasks (accept${seeded === 0 ? ", then cancel 10%" : ""})`,
        `${seconds.toFixed(1)} s`,
      ]);
      seeded = size;
      for (const listCase of CASES) {
        measured.push(await measureCase(context, inst, { pid: started.child.pid, port: started.port }, size, listCase));
      }
    }
  } finally {
    clearInterval(beat);
    await gateway?.stop();
    await inst.close();
  }
  const smallest = SIZES[0] ?? 0;
  const largest = SIZES.at(-1) ?? 0;
  const growth = CASES.map((listCase) => {
    const at = (size: number) => measured.find((m) => m.size === size && m.case === listCase)!;
    const low = at(smallest);
    const high = at(largest);
    // a case whose answers failed (no p50) is the worst there is
    const ratio = (a: number, b: number) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? a / b : Infinity);
    const failed = low.row.errors > 0 || high.row.errors > 0;
    return {
      listCase,
      low,
      high,
      latency: failed ? Infinity : ratio(high.p50, low.p50),
      cpu: failed ? Infinity : ratio(high.cpuUs, low.cpuUs),
    };
  });
  const worst = growth.reduce((top, entry) =>
    Math.max(entry.latency, entry.cpu) > Math.max(top.latency, top.cpu) ? entry : top,
  );
  const met = growth.every((entry) => entry.latency <= FLAT_FACTOR && entry.cpu <= FLAT_FACTOR);
  return {
    id: "list",
    title: LIST_TITLE,
    setup: [
      `One client's tasks in the \`${PROFILE}\` profile, seeded through the public API: SendMessage with returnImmediately (32 connections) and no actor running (a seeded liveness record), so they stay queued (TASK_STATE_SUBMITTED); of the first ${fmt(SIZES[0] ?? 0)}, every ${FILTERED_EVERY}th is canceled with CancelTask (a queued task is canceled at once), and no later one. Sizes grow in place: ${SIZES.map((size) => fmt(size)).join(" → ")} tasks. So the status filter selects the same ${fmt((SIZES[0] ?? 0) / FILTERED_EVERY)} tasks at every size (its pages are alike), and they sit behind every newer task: the case a filter that reads each task's state handles worst, and the one a status filter is for (the few failed tasks among many finished ones).`,
      `${CLIENTS} keep-alive connections, one ListTasks in flight each, pageSize ${PAGE_SIZE}: the first page, and the page that starts in the middle of the matching tasks (its pageToken taken from the journal's own list, as a client that paged there would hold it), each without a filter and with status ${FILTER}. Every answer must hold the expected number of tasks.`,
      `Bounds per case: ${pick(context, 4, 2) * CLIENTS} warm-up requests, then at most ${fmt(pick(context, 3_000, 600))} requests or ${pick(context, 10, 3)} s. server.storeTimeoutSeconds raised to 60 so that a slow list is measured, not cut to HTTP 503. CPU per request: the gateway's and redis-server's CPU in the window ÷ requests.`,
      `"Flat": at ${fmt(largest)} tasks, p50 latency and CPU per request at most ${FLAT_FACTOR}× those at ${fmt(smallest)} tasks, for every case.`,
    ],
    rows: measured.map((m) => m.row),
    targets: [
      {
        text: LIST_TARGETS[0] ?? "",
        measured: growth
          .map((entry) =>
            Number.isFinite(entry.latency) && Number.isFinite(entry.cpu)
              ? `${entry.listCase.name}: p50 ${entry.latency.toFixed(1)}×, CPU ${entry.cpu.toFixed(1)}×`
              : `${entry.listCase.name}: ${fmt(entry.low.row.errors + entry.high.row.errors)} answers without the expected tasks`,
          )
          .join("; "),
        met,
        ...(met
          ? {}
          : {
              why: `worst: ${worst.listCase.name}, p50 ${ms(worst.low.p50)} → ${ms(worst.high.p50)} ms and CPU per request ${fmt(worst.low.cpuUs)} → ${fmt(worst.high.cpuUs)} µs from ${fmt(smallest)} to ${fmt(largest)} tasks. The cost of a page grows with the tasks the client has, not with the page size (see the CPU per request of each row).`,
            }),
      },
    ],
    figures: seeding,
    notes: [],
  };
}
