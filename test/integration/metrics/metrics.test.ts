// Scrapes the gateway's and the supervisor's GET /metrics and shows the counters move: a refusal while no worker is
// live, then an accepted task that a real actor process completes, each request counted under its binding. Also:
// server.metricsToken guards the gateway's.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { runSupervisor } from "../../../src/actors/index.ts";
import { loadConfig } from "../../../src/config/index.ts";
import { type RunningGateway, startGateway } from "../../../src/gateway/index.ts";
import { ClientRegistry, KeySpace } from "../../../src/journal/index.ts";
import { createLogger } from "../../../src/log.ts";
import { freePort, startRedis, type TestRedis, testPrefix } from "../../support/redis.ts";

const TOKEN = "scrape-token-1";
let server: TestRedis;
let gateway: RunningGateway;
let metricsPort: number;
let apiKey: string;
let env: Record<string, string>;
const stopWorkers = new AbortController();
let supervisor: Promise<number> | undefined;

beforeAll(async () => {
  server = await startRedis();
  metricsPort = await freePort();
  const prefix = testPrefix();
  env = {
    A2A_REDIS_URL: server.url,
    A2A_REDIS_KEY_PREFIX: prefix,
    A2A_SERVER_HOST: "127.0.0.1",
    A2A_SERVER_METRICS_TOKEN: TOKEN,
    A2A_WORKER_METRICS_PORT: String(metricsPort),
    A2A_WORKER_ACTORS: "1",
    A2A_WORKER_HEARTBEAT_SECONDS: "1",
    A2A_WORKER_LIVENESS_SECONDS: "3",
    A2A_LOG_LEVEL: "error",
  };
  const config = loadConfig({ env });
  gateway = await startGateway(config, { port: 0, logger: createLogger("metrics-test", "error") });
  const redis = server.client();
  apiKey = (await new ClientRegistry(redis, new KeySpace(prefix, 1)).add({ name: "metrics" })).apiKey;
  redis.disconnect();
});

afterAll(async () => {
  stopWorkers.abort();
  await supervisor;
  await gateway.stop();
  await server.stop();
});

async function send(text: string): Promise<{ result?: { task: { status: { state: string } } }; error?: unknown }> {
  const response = await fetch(`${gateway.url}/a2a/echo`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${apiKey}`, "A2A-Version": "1.0" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "SendMessage",
      params: { message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }] } },
    }),
  });
  return (await response.json()) as { result?: { task: { status: { state: string } } }; error?: unknown };
}

/** One HTTP+JSON request to the echo profile; answers with the HTTP status. */
async function restCall(method: string, path: string, body?: unknown): Promise<number> {
  const response = await fetch(`${gateway.url}/a2a/echo${path}`, {
    method,
    headers: { "Content-Type": "application/a2a+json", Authorization: `Bearer ${apiKey}`, "A2A-Version": "1.0" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  await response.body?.cancel();
  return response.status;
}

async function scrape(url: string, headers: Record<string, string> = {}): Promise<string> {
  const response = await fetch(url, { headers });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/plain");
  return await response.text();
}

const gatewayMetrics = () => scrape(`${gateway.url}/metrics`, { Authorization: `Bearer ${TOKEN}` });
const supervisorMetrics = () => scrape(`http://127.0.0.1:${metricsPort}/metrics`);

/** The value of one series, e.g. value(text, 'a2a_refusals_total{reason="WORKER_UNAVAILABLE"}'); 0 when absent. */
function value(text: string, series: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

async function eventually(read: () => Promise<number>, wanted: number, timeoutMs: number): Promise<number> {
  const until = Date.now() + timeoutMs;
  let seen = await read();
  while (seen !== wanted && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    seen = await read();
  }
  return seen;
}

test("the gateway's /metrics needs the bearer token when server.metricsToken is set", async () => {
  expect((await fetch(`${gateway.url}/metrics`)).status).toBe(401);
  const wrong = await fetch(`${gateway.url}/metrics`, { headers: { Authorization: "Bearer nope" } });
  expect(wrong.status).toBe(401);
  expect(await gatewayMetrics()).toContain("# TYPE a2a_accepts_total counter");
});

test("counters move as a task is refused, then accepted and completed by a real actor", async () => {
  const before = await gatewayMetrics();
  expect(value(before, 'a2a_refusals_total{reason="WORKER_UNAVAILABLE"}')).toBe(0);

  const refused = await send("nobody is working");
  expect(refused.error).toBeDefined();
  const afterRefusal = await gatewayMetrics();
  expect(value(afterRefusal, 'a2a_refusals_total{reason="WORKER_UNAVAILABLE"}')).toBe(1);
  expect(value(afterRefusal, 'a2a_requests_total{binding="jsonrpc",method="SendMessage",code="-32000"}')).toBe(1);
  const message = { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: "over HTTP+JSON" }] };
  expect(await restCall("POST", "/message:send", { message })).toBe(503);
  const afterRestRefusal = await gatewayMetrics();
  expect(value(afterRestRefusal, 'a2a_refusals_total{reason="WORKER_UNAVAILABLE"}')).toBe(2);
  expect(value(afterRestRefusal, 'a2a_requests_total{binding="rest",method="SendMessage",code="-32000"}')).toBe(1);
  expect(value(afterRestRefusal, 'a2a_requests_total{binding="jsonrpc",method="SendMessage",code="-32000"}')).toBe(1);
  expect(value(afterRefusal, 'a2a_accepts_total{profile="echo",kind="new"}')).toBe(0);
  expect(value(afterRefusal, "a2a_live_workers")).toBe(0);
  expect(value(afterRefusal, "a2a_installation_read_ok")).toBe(1);

  const config = loadConfig({ env });
  supervisor = runSupervisor(config, {
    env: { ...process.env, ...env },
    logger: createLogger("metrics-supervisor", "error"),
    handleSignals: false,
    signal: stopWorkers.signal,
  });
  const live = async () => value(await gatewayMetrics(), "a2a_live_workers");
  expect(await eventually(live, 1, 15_000)).toBe(1);

  const answered = await send("counted");
  expect(answered).toMatchObject({ result: { task: { status: { state: "TASK_STATE_COMPLETED" } } } });
  const after = await gatewayMetrics();
  expect(value(after, 'a2a_accepts_total{profile="echo",kind="new"}')).toBe(1);
  expect(value(after, 'a2a_blocking_waits_total{outcome="met"}')).toBe(1);
  expect(value(after, 'a2a_blocking_wait_seconds_count{outcome="met"}')).toBe(1);
  expect(value(after, 'a2a_requests_total{binding="jsonrpc",method="SendMessage",code="0"}')).toBe(1);
  expect(await restCall("GET", "/tasks")).toBe(200);
  expect(await restCall("GET", "/tasks/no-such-task")).toBe(404);
  const afterRest = await gatewayMetrics();
  expect(value(afterRest, 'a2a_requests_total{binding="rest",method="ListTasks",code="0"}')).toBe(1);
  expect(value(afterRest, 'a2a_requests_total{binding="rest",method="GetTask",code="-32001"}')).toBe(1);
  expect(value(afterRest, 'a2a_request_duration_seconds_count{binding="rest",method="ListTasks"}')).toBe(1);
  // The OpenTelemetry A2A convention's a2a.server.operation.duration, under its attribute names.
  const operation = (labels: string) => value(afterRest, `a2a_server_operation_duration_seconds_count{${labels}}`);
  expect(operation('a2a_method_name="ListTasks",a2a_protocol_binding="HTTP+JSON",error_type=""')).toBe(1);
  expect(operation('a2a_method_name="GetTask",a2a_protocol_binding="HTTP+JSON",error_type="TaskNotFoundError"')).toBe(
    1,
  );
  expect(value(after, "a2a_queue_depth")).toBe(0);
  expect(value(after, "a2a_open_streams")).toBe(0);

  // The actor reports a snapshot every second; the supervisor sums them.
  const completed = async () => value(await supervisorMetrics(), 'a2a_runs_total{outcome="completed"}');
  expect(await eventually(completed, 1, 5000)).toBe(1);
  const workers = await supervisorMetrics();
  expect(value(workers, 'a2a_run_duration_seconds_count{outcome="completed"}')).toBe(1);
  expect(value(workers, "a2a_actors")).toBe(1);
  expect(workers).toContain("# TYPE a2a_reclaims_total counter");
  expect(workers).toContain("# TYPE a2a_push_deliveries_total counter");
}, 40_000);
