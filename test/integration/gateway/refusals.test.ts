// Every refusal: no live worker, the client's limit, a profile quota, the waiting-request limit, an unreachable store,
// missing or bad credentials and a forbidden profile. Each answer is actionable and nothing is stored.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { keysUnder } from "../../support/redis.ts";
import {
  errorInfo,
  eventually,
  type Harness,
  message,
  post,
  profile,
  retryInfo,
  rpc,
  startHarness,
} from "./harness.ts";

let h: Harness;

beforeAll(async () => {
  h = await startHarness({
    profiles: [profile("echo"), profile("scarce", { quota: { maxActiveTasks: 1 } })],
    env: { A2A_SERVER_MAX_WAITING_REQUESTS: "1", A2A_SERVER_BLOCKING_WAIT_SECONDS: "5" },
  });
});

afterAll(async () => {
  await h.stop();
});

/** Asserts the common shape of a refusal: 503, Retry-After, -32000, ErrorInfo with `reason` and a RetryInfo. */
function expectRefusal(answer: Awaited<ReturnType<typeof rpc>>, reason: string): void {
  expect(answer.status).toBe(503);
  expect(answer.headers.get("retry-after")).toMatch(/^\d+$/);
  expect(answer.body.error.code).toBe(-32000);
  expect(errorInfo(answer)).toMatchObject({ reason, domain: "a2a-runtime" });
  expect(retryInfo(answer)?.retryDelay).toBe(`${answer.headers.get("retry-after")}s`);
}

describe("no live worker", () => {
  test("503 with Retry-After, ErrorInfo and RetryInfo, nothing stored; after a heartbeat the same request is accepted", async () => {
    const client = await h.client();
    const ready = await fetch(`${h.gateway.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({
      ready: false,
      redis: "ok",
      shards: [{ shard: 0, beatAgeSeconds: null }],
    });

    const params = { message: message("anyone there?") };
    const before = await keysUnder(h.redis, h.prefix);
    const blocking = await rpc(h.gateway.url, "SendMessage", params, { key: client.key });
    expectRefusal(blocking, "WORKER_UNAVAILABLE");
    const immediate = await rpc(
      h.gateway.url,
      "SendMessage",
      { ...params, configuration: { returnImmediately: true } },
      { key: client.key },
    );
    expectRefusal(immediate, "WORKER_UNAVAILABLE");
    expect(await keysUnder(h.redis, h.prefix)).toEqual(before);

    await h.actor.live();
    expect((await fetch(`${h.gateway.url}/readyz`)).status).toBe(200);
    const pending = rpc(h.gateway.url, "SendMessage", params, { key: client.key });
    await h.actor.complete(await h.actor.takeOne({ clientId: client.id }));
    const accepted = await pending;
    expect(accepted.status).toBe(200);
    expect(accepted.body.result.task.status.state).toBe("TASK_STATE_COMPLETED");
  });
});

describe("capacity", () => {
  test("the client's limit of queued + running tasks", async () => {
    const client = await h.client({ limit: 1 });
    const first = await rpc(
      h.gateway.url,
      "SendMessage",
      { message: message("one"), configuration: { returnImmediately: true } },
      { key: client.key },
    );
    expect(first.status).toBe(200);
    const before = await keysUnder(h.redis, h.prefix);
    const second = await rpc(
      h.gateway.url,
      "SendMessage",
      { message: message("two"), configuration: { returnImmediately: true } },
      { key: client.key },
    );
    expectRefusal(second, "CLIENT_TASK_LIMIT_EXCEEDED");
    expect(await keysUnder(h.redis, h.prefix)).toEqual(before);
    await rpc(h.gateway.url, "CancelTask", { id: first.body.result.task.id }, { key: client.key });
    const third = await rpc(
      h.gateway.url,
      "SendMessage",
      { message: message("three"), configuration: { returnImmediately: true } },
      { key: client.key },
    );
    expect(third.status).toBe(200);
  });

  test("a profile's quota counts every client's tasks", async () => {
    const a = await h.client({ profiles: ["scarce"] });
    const b = await h.client({ profiles: ["scarce"] });
    const send = (key: string) =>
      rpc(
        h.gateway.url,
        "SendMessage",
        { message: message("q"), configuration: { returnImmediately: true } },
        { key, profile: "scarce" },
      );
    expect((await send(a.key)).status).toBe(200);
    const before = await keysUnder(h.redis, h.prefix);
    const refused = await send(b.key);
    expectRefusal(refused, "PROFILE_QUOTA_EXCEEDED");
    expect(errorInfo(refused).metadata).toEqual({ profile: "scarce" });
    expect(await keysUnder(h.redis, h.prefix)).toEqual(before);
  });

  test("more waiting blocking requests than server.maxWaitingRequests", async () => {
    const client = await h.client();
    const pending = rpc(h.gateway.url, "SendMessage", { message: message("hold the slot") }, { key: client.key });
    await eventually(async () => (await h.redis.zcard(h.keys.waiting())) === 1);
    const other = await h.client();
    const before = await keysUnder(h.redis, h.prefix);
    const refused = await rpc(h.gateway.url, "SendMessage", { message: message("no room") }, { key: other.key });
    expectRefusal(refused, "WAITING_REQUESTS_LIMIT_EXCEEDED");
    expect(errorInfo(refused).metadata).toEqual({ limit: "1" });
    expect(await keysUnder(h.redis, h.prefix)).toEqual(before);
    // returnImmediately never waits, so it is not limited
    const immediate = await rpc(
      h.gateway.url,
      "SendMessage",
      { message: message("poll me"), configuration: { returnImmediately: true } },
      { key: client.key },
    );
    expect(immediate.status).toBe(200);
    const [first] = await h.actor.take(2, { clientId: client.id });
    await h.actor.complete(first!);
    expect((await pending).body.result.task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(await h.redis.zcard(h.keys.waiting())).toBe(0);
  });
});

describe("credentials", () => {
  test("no credentials or an unknown key: 401 with WWW-Authenticate, nothing read or stored", async () => {
    const before = await keysUnder(h.redis, h.prefix);
    for (const key of [undefined, "a2a_not-a-key"]) {
      const answer = await rpc(h.gateway.url, "SendMessage", { message: message("x") }, { key });
      expect(answer.status).toBe(401);
      expect(answer.headers.get("www-authenticate")).toBe('Bearer realm="a2a-runtime"');
      expect(answer.body.error.code).toBe(-32000);
      expect(errorInfo(answer).reason).toBe("UNAUTHENTICATED");
    }
    expect(await keysUnder(h.redis, h.prefix)).toEqual(before);
  });

  test("the X-API-Key header works; a revoked key stops working within a second", async () => {
    const client = await h.client();
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ListTasks", params: {} });
    const viaHeader = await post(h.gateway.url, body, { headers: { "X-API-Key": client.key } });
    expect(viaHeader.status).toBe(200);
    expect(viaHeader.body.result.tasks).toEqual([]);
    await h.clients.revoke(client.id);
    await Bun.sleep(1100);
    const revoked = await post(h.gateway.url, body, { headers: { "X-API-Key": client.key } });
    expect(revoked.status).toBe(401);
  });

  test("a profile the client may not use: 403 PERMISSION_DENIED", async () => {
    const client = await h.client({ profiles: ["scarce"] });
    const before = await keysUnder(h.redis, h.prefix);
    const answer = await rpc(h.gateway.url, "SendMessage", { message: message("x") }, { key: client.key });
    expect(answer.status).toBe(403);
    expect(answer.body.error.code).toBe(-32000);
    expect(errorInfo(answer)).toMatchObject({ reason: "PERMISSION_DENIED", metadata: { profile: "echo" } });
    expect(await keysUnder(h.redis, h.prefix)).toEqual(before);
  });
});

describe("store unavailable", () => {
  test("Redis gone: 503 STORE_UNAVAILABLE; the gateway serves again once Redis is back", async () => {
    const own = await startHarness();
    try {
      const client = await own.client();
      await own.actor.live();
      own.server.kill();
      await Bun.sleep(1100); // past the authentication cache
      const started = performance.now();
      const answer = await rpc(
        own.gateway.url,
        "SendMessage",
        { message: message("x"), configuration: { returnImmediately: true } },
        { key: client.key },
      );
      expectRefusal(answer, "STORE_UNAVAILABLE");
      expect(performance.now() - started).toBeLessThan(5000);
      expect((await fetch(`${own.gateway.url}/readyz`)).status).toBe(503);
      expect((await fetch(`${own.gateway.url}/healthz`)).status).toBe(200);

      await own.server.restart();
      const again = await own.client();
      await own.actor.live();
      await eventually(async () => {
        const retry = await rpc(
          own.gateway.url,
          "SendMessage",
          { message: message("back"), configuration: { returnImmediately: true } },
          { key: again.key },
        );
        return retry.status === 200;
      }, 10_000);
    } finally {
      await own.stop();
    }
  });
});
