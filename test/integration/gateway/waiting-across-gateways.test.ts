// server.maxWaitingRequests holds across gateway processes sharing one Redis, and a gateway killed with SIGKILL
// leaks its waiting leases for at most their TTL.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { DEFAULT_WAITING_LEASE_TTL_MS } from "../../../src/gateway/index.ts";
import { CapacityLeases } from "../../../src/journal/index.ts";
import { freePort } from "../../support/redis.ts";
import { errorInfo, eventually, type Harness, message, rpc, startHarness } from "./harness.ts";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

let h: Harness;
let child: ChildProcess | undefined;
let other: string;

beforeAll(async () => {
  h = await startHarness({
    env: {
      A2A_SERVER_MAX_WAITING_REQUESTS: "2",
      A2A_CLIENTS_MAX_WAITING_REQUESTS: "100",
      A2A_SERVER_BLOCKING_WAIT_SECONDS: "40",
    },
  });
  await h.actor.live();
  const port = await freePort();
  child = spawn(process.execPath, ["src/cli.ts", "gateway", "--port", String(port)], {
    cwd: ROOT,
    env: { ...process.env, ...h.env },
    stdio: ["ignore", "ignore", "inherit"],
  });
  other = `http://127.0.0.1:${port}`;
  await eventually(async () => {
    const response = await fetch(`${other}/healthz`).catch(() => undefined);
    return response?.status === 200;
  }, 15_000);
});

afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await h.stop();
});

test("two gateways share the limit; a killed gateway's leases lapse within their TTL", async () => {
  const leases = new CapacityLeases(h.redis);
  const live = () => leases.count(h.keys.waiting());
  const client = await h.client();
  const send = (base: string) => rpc(base, "SendMessage", { message: message("wait") }, { key: client.key });

  const here = send(h.gateway.url);
  const there = send(other).catch(() => undefined);
  await eventually(async () => (await live()) === 2);

  for (const base of [h.gateway.url, other]) {
    const refused = await send(base);
    expect(refused.status).toBe(503);
    expect(errorInfo(refused).reason).toBe("WAITING_REQUESTS_LIMIT_EXCEEDED");
  }

  child?.kill("SIGKILL");
  const killed = Date.now();
  await there;
  await eventually(async () => (await live()) === 1, DEFAULT_WAITING_LEASE_TTL_MS + 2000);
  expect(Date.now() - killed).toBeLessThanOrEqual(DEFAULT_WAITING_LEASE_TTL_MS + 500);

  const next = send(h.gateway.url);
  await eventually(async () => (await live()) === 2);
  const claims = await h.actor.take(3, { clientId: client.id });
  await Promise.all(claims.map((claim) => h.actor.complete(claim)));
  for (const answer of await Promise.all([here, next])) {
    expect(answer.status).toBe(200);
    expect(answer.body.result.task.status.state).toBe("TASK_STATE_COMPLETED");
  }
  expect(await live()).toBe(0);
}, 40_000);
