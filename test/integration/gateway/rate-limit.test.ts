// clients.requestsPerSecond: one token bucket per client in Redis, shared by every gateway; past it HTTP 429
// RATE_LIMIT_EXCEEDED with Retry-After and a RetryInfo, before the body is read and with nothing stored; other clients
// are not slowed.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type RunningGateway, startGateway } from "../../../src/gateway/index.ts";
import { createLogger } from "../../../src/log.ts";
import { keysUnder } from "../../support/redis.ts";
import { errorInfo, type Harness, post, retryInfo, rpc, startHarness } from "./harness.ts";

let h: Harness;
let second: RunningGateway;

beforeAll(async () => {
  h = await startHarness({ env: { A2A_CLIENTS_REQUESTS_PER_SECOND: "1", A2A_CLIENTS_REQUEST_BURST: "4" } });
  await h.actor.live();
  second = await startGateway(h.config, { port: 0, logger: createLogger("second-gateway", "error") });
});

afterAll(async () => {
  await second.stop();
  await h.stop();
});

test("a client past its burst is refused 429 on every gateway; another client is served", async () => {
  const fast = await h.client();
  const other = await h.client();
  const get = (url: string, key: string) => rpc(url, "GetTask", { id: "t-missing" }, { key });
  for (let i = 0; i < 4; i++) expect((await get(i % 2 === 0 ? h.gateway.url : second.url, fast.key)).status).toBe(200);
  const before = await keysUnder(h.redis, h.prefix);
  for (const url of [h.gateway.url, second.url]) {
    const refused = await get(url, fast.key);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(refused.body.error.code).toBe(-32000);
    expect(errorInfo(refused).reason).toBe("RATE_LIMIT_EXCEEDED");
    expect(errorInfo(refused).metadata).toEqual({ requestsPerSecond: "1" });
    expect(retryInfo(refused)?.retryDelay).toBe("1s");
  }
  // A refused request is not read: even a body that is not JSON gets the 429.
  expect((await post(h.gateway.url, "not json", { key: fast.key })).status).toBe(429);
  expect(await keysUnder(h.redis, h.prefix)).toEqual(before);
  expect((await get(h.gateway.url, other.key)).status).toBe(200);
});
