// deliverOnce against real receivers on 127.0.0.1: headers, body, signature, and each outcome rule.
// Only loopback is ever connected to: names resolve through an injected table and the connector refuses the rest.
import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import {
  createHttpConnector,
  type DeliverDeps,
  type Delivery,
  deliverOnce,
  type ResolvedAddress,
  type Resolver,
  verifyWebhook,
} from "../../../src/push/index.ts";
import {
  ipv6LoopbackAvailable,
  loopbackOnly,
  type Receiver,
  selfSignedCertificate,
  startReceiver,
  type TlsMaterial,
} from "./receiver.ts";

const SECRETS = ["whsec_dGhlLWZpcnN0LXNpZ25pbmcta2V5LWZvci10ZXN0cw==", "a plain second secret"];
const NOW_MS = Date.parse("2025-06-01T12:00:00Z");
const IPV6_LOOPBACK = await ipv6LoopbackAvailable();

const statusUpdate = {
  statusUpdate: {
    taskId: "task-1",
    contextId: "ctx-1",
    status: { state: "TASK_STATE_WORKING" as const, timestamp: "2025-06-01T12:00:00Z" },
  },
};

/** hook.test and localhost are 127.0.0.1; everything else is unknown. */
function loopbackNames(): Resolver & { asked: string[] } {
  const asked: string[] = [];
  const resolve = async (hostname: string): Promise<ResolvedAddress[]> => {
    asked.push(hostname);
    if (hostname === "hook.test" || hostname === "localhost") return [{ address: "127.0.0.1", family: 4 }];
    throw Object.assign(new Error(hostname), { code: "ENOTFOUND" });
  };
  return Object.assign(resolve, { asked });
}

let connector = loopbackOnly();
const receivers: Receiver[] = [];
/** The ports of this test's receivers (closed ones too): the allow-list names each of them, and no other port. */
let ports: number[] = [];
afterEach(async () => {
  const { violations } = connector;
  connector = loopbackOnly();
  ports = [];
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  expect(violations).toEqual([]);
});

async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
  const started = await startReceiver(...args);
  receivers.push(started);
  ports.push(started.port);
  return started;
}

function deps(extra: Partial<DeliverDeps> = {}): DeliverDeps {
  return {
    policy: { allowHosts: ports.flatMap((port) => [`hook.test:${port}`, `localhost:${port}`, `127.0.0.1:${port}`]) },
    secrets: SECRETS,
    timeoutMs: 2000,
    resolve: loopbackNames(),
    request: connector,
    nowMs: () => NOW_MS,
    ...extra,
  };
}

function delivery(url: string, extra: Partial<Delivery> = {}): Delivery {
  return { id: "dlv_01J0000000000000000000000", url, body: statusUpdate, ...extra };
}

describe("a delivered notification", () => {
  test("carries the body, the content type, the config's credentials and token, and a valid signature", async () => {
    const hook = await receiver();
    const outcome = await deliverOnce(
      delivery(`http://hook.test:${hook.port}/a2a/events?tenant=t1`, {
        token: "tok-123",
        authentication: { scheme: "Bearer", credentials: "cred-456" },
      }),
      deps(),
    );
    expect(outcome).toEqual({ kind: "delivered", status: 200 });
    expect(hook.requests).toHaveLength(1);
    const [got] = hook.requests;
    expect(got).toMatchObject({ method: "POST", url: "/a2a/events?tenant=t1", remoteAddress: "127.0.0.1" });
    expect(got!.headers).toMatchObject({
      host: `hook.test:${hook.port}`,
      "content-type": "application/a2a+json",
      authorization: "Bearer cred-456",
      "x-a2a-notification-token": "tok-123",
      "webhook-id": "dlv_01J0000000000000000000000",
      "webhook-timestamp": String(NOW_MS / 1000),
    });
    expect(JSON.parse(got!.body)).toEqual(statusUpdate);
    expect(String(got!.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    for (const secret of SECRETS) {
      expect(verifyWebhook(got!.headers, got!.body, [secret], 300, NOW_MS / 1000)).toMatchObject({ ok: true });
    }
    expect(verifyWebhook(got!.headers, `${got!.body} `, SECRETS, 300, NOW_MS / 1000).ok).toBe(false);
  });

  test("without authentication or token, neither header is sent", async () => {
    const hook = await receiver(() => ({ status: 204 }));
    const outcome = await deliverOnce(delivery(`http://localhost:${hook.port}/`), deps());
    expect(outcome).toEqual({ kind: "delivered", status: 204 });
    expect(hook.requests[0]!.headers.authorization).toBeUndefined();
    expect(hook.requests[0]!.headers["x-a2a-notification-token"]).toBeUndefined();
  });

  test("the connection goes to the address that was checked; the name is looked up once", async () => {
    const hook = await receiver();
    let lookups = 0;
    // A rebinding resolver: the first answer passes the policy, any later one would point elsewhere.
    const rebinding: Resolver = async () => {
      lookups += 1;
      return [{ address: lookups === 1 ? "127.0.0.1" : "10.0.0.1", family: 4 }];
    };
    const outcome = await deliverOnce(delivery(`http://hook.test:${hook.port}/`), deps({ resolve: rebinding }));
    expect(outcome.kind).toBe("delivered");
    expect(lookups).toBe(1);
    expect(connector.calls.map((call) => call.address)).toEqual(["127.0.0.1"]);
  });
  test.skipIf(!IPV6_LOOPBACK)("an allow-listed IPv6 literal host is reached over IPv6", async () => {
    const hook = await receiver(undefined, undefined, "::1");
    const outcome = await deliverOnce(
      delivery(`http://[::1]:${hook.port}/v6`),
      deps({ policy: { allowHosts: [`[::1]:${hook.port}`] } }),
    );
    expect(outcome).toEqual({ kind: "delivered", status: 200 });
    expect(hook.requests[0]).toMatchObject({ url: "/v6", remoteAddress: "::1" });
    expect(hook.requests[0]!.headers.host).toBe(`[::1]:${hook.port}`);
  });
});

describe("retries", () => {
  test("503 with Retry-After, then 200: retry with the receiver's delay, the same webhook-id, a fresh timestamp", async () => {
    const hook = await receiver((_request, index) =>
      index === 0 ? { status: 503, headers: { "retry-after": "7" } } : { status: 200 },
    );
    const url = `http://hook.test:${hook.port}/`;
    const first = await deliverOnce(delivery(url), deps());
    expect(first).toEqual({ kind: "retry", reason: "http status 503", status: 503, retryAfterMs: 7000 });
    const second = await deliverOnce(delivery(url), deps({ nowMs: () => NOW_MS + 7000 }));
    expect(second).toEqual({ kind: "delivered", status: 200 });
    const [a, b] = hook.requests;
    expect(a!.headers["webhook-id"]).toBe(b!.headers["webhook-id"]);
    expect(Number(b!.headers["webhook-timestamp"]) - Number(a!.headers["webhook-timestamp"])).toBe(7);
    expect(verifyWebhook(b!.headers, b!.body, SECRETS, 300, NOW_MS / 1000 + 7).ok).toBe(true);
  });

  test("429 with an HTTP-date Retry-After; 500 retries and its Retry-After is not a 429/503 one", async () => {
    const at = new Date(NOW_MS + 30_000).toUTCString();
    const answers = [
      { status: 429, headers: { "retry-after": at } },
      { status: 500, headers: { "retry-after": "99" } },
      { status: 502 },
    ];
    const hook = await receiver((_request, index) => answers[index]!);
    const url = `http://hook.test:${hook.port}/`;
    expect(await deliverOnce(delivery(url), deps())).toEqual({
      kind: "retry",
      reason: "http status 429",
      status: 429,
      retryAfterMs: 30_000,
    });
    expect(await deliverOnce(delivery(url), deps())).toEqual({ kind: "retry", reason: "http status 500", status: 500 });
    expect(await deliverOnce(delivery(url), deps())).toEqual({ kind: "retry", reason: "http status 502", status: 502 });
  });

  test("a receiver that does not answer in time: retry after the timeout", async () => {
    const hook = await receiver(() => ({ hang: true }));
    const started = performance.now();
    const outcome = await deliverOnce(delivery(`http://hook.test:${hook.port}/`), deps({ timeoutMs: 300 }));
    const elapsed = performance.now() - started;
    expect(outcome).toEqual({ kind: "retry", reason: "timeout after 300 ms" });
    expect(hook.requests).toHaveLength(1);
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(2000);
  });

  test("nobody listening: retry with the network error", async () => {
    const hook = await receiver();
    const port = hook.port;
    await receivers.pop()!.close();
    const outcome = await deliverOnce(delivery(`http://127.0.0.1:${port}/`), deps());
    expect(outcome).toEqual({ kind: "retry", reason: "network error ECONNREFUSED" });
  });

  test("a name that does not resolve, or resolves too slowly, is retried without connecting", async () => {
    const missing = await deliverOnce(
      delivery("http://nowhere.test/"),
      deps({ policy: { allowHosts: ["nowhere.test"] } }),
    );
    expect(missing).toEqual({ kind: "retry", reason: "dns lookup failed for nowhere.test: ENOTFOUND" });
    const slow: Resolver = () => new Promise(() => {});
    const stalled = await deliverOnce(delivery("https://slow.example.com/"), deps({ resolve: slow, timeoutMs: 100 }));
    expect(stalled).toEqual({ kind: "retry", reason: "dns lookup timeout after 100 ms" });
    expect(connector.calls).toEqual([]);
  });
});

describe("no retry", () => {
  test("400: give up after one request", async () => {
    const hook = await receiver(() => ({ status: 400 }));
    const outcome = await deliverOnce(delivery(`http://hook.test:${hook.port}/`), deps());
    expect(outcome).toEqual({ kind: "give-up", reason: "http status 400", status: 400 });
    expect(hook.requests).toHaveLength(1);
  });

  test("410: disable the config", async () => {
    const hook = await receiver(() => ({ status: 410 }));
    const outcome = await deliverOnce(delivery(`http://hook.test:${hook.port}/`), deps());
    expect(outcome).toEqual({ kind: "disable", reason: "http status 410 gone", status: 410 });
  });

  test("a 302 to another receiver is not followed: the target sees nothing", async () => {
    const target = await receiver();
    const target302 = `http://127.0.0.1:${target.port}/elsewhere`;
    const hook = await receiver(() => ({ status: 302, headers: { location: target302 } }));
    const outcome = await deliverOnce(delivery(`http://hook.test:${hook.port}/`), deps());
    expect(outcome).toEqual({ kind: "give-up", reason: `redirect 302 to ${target302} not followed`, status: 302 });
    expect(hook.requests).toHaveLength(1);
    expect(target.requests).toHaveLength(0);
  });

  test("a 307 to a private address is not followed, and its reason names the target", async () => {
    const hook = await receiver(() => ({ status: 307, headers: { location: "http://10.0.0.1/internal" } }));
    const outcome = await deliverOnce(delivery(`http://hook.test:${hook.port}/`), deps());
    expect(outcome).toEqual({
      kind: "give-up",
      reason: "redirect 307 to http://10.0.0.1/internal not followed",
      status: 307,
    });
    expect(connector.calls).toHaveLength(1);
  });

  test("credentials, a token or an id that would break the header block: give up without a request", async () => {
    const hook = await receiver();
    const url = `http://hook.test:${hook.port}/`;
    const injected = { scheme: "Bearer", credentials: "x\r\nX-Evil: 1" };
    expect(await deliverOnce(delivery(url, { authentication: injected }), deps())).toEqual({
      kind: "give-up",
      reason: "invalid authentication credentials",
    });
    expect(await deliverOnce(delivery(url, { authentication: { scheme: "Bearer x" } }), deps())).toEqual({
      kind: "give-up",
      reason: "invalid authentication scheme",
    });
    expect(await deliverOnce(delivery(url, { token: "a\nb" }), deps())).toEqual({
      kind: "give-up",
      reason: "invalid notification token",
    });
    expect(await deliverOnce(delivery(url, { id: "dlv\r\nX: 1" }), deps())).toEqual({
      kind: "give-up",
      reason: "invalid webhook id",
    });
    expect(hook.requests).toHaveLength(0);
  });
});

describe("refused by the address policy, without connecting", () => {
  const publicAndPrivate: Resolver = async (hostname) =>
    hostname === "mixed.example.com"
      ? [
          { address: "93.184.216.34", family: 4 },
          { address: "10.20.30.40", family: 4 },
        ]
      : [{ address: "192.168.7.7", family: 4 }];
  const cases: [string, string][] = [
    ["http://127.0.0.1/", "loopback address 127.0.0.1"],
    ["http://[::1]/", "loopback address ::1"],
    ["http://169.254.169.254/latest/meta-data/", "metadata address 169.254.169.254"],
    ["http://10.0.0.1/", "private address 10.0.0.1"],
    ["https://intranet.example.com/hook", "private address 192.168.7.7"],
    ["http://[::ffff:127.0.0.1]/", "ipv4-mapped loopback address ::ffff:7f00:1"],
    ["https://mixed.example.com/hook", "private address 10.20.30.40"],
    ["http://2130706433/", "loopback address 127.0.0.1"],
    ["http://hooks.example.com/", "scheme http: not allowed"],
  ];
  for (const [url, reason] of cases) {
    test(url, async () => {
      const outcome = await deliverOnce(delivery(url), deps({ policy: { allowHosts: [] }, resolve: publicAndPrivate }));
      expect(outcome).toEqual({ kind: "refused", reason });
      expect(connector.calls).toEqual([]);
    });
  }
});

describe("https", () => {
  let tls: TlsMaterial | undefined;
  beforeAll(() => {
    tls = selfSignedCertificate();
  });

  test("connects to the checked address but presents and verifies the URL's host name", async () => {
    if (tls === undefined) throw new Error("openssl is needed to make a test certificate");
    const hook = await receiver(() => ({}), tls);
    const secure = loopbackOnly(createHttpConnector({ ca: tls.cert }));
    connector = secure;
    const outcome = await deliverOnce(delivery(`https://hook.test:${hook.port}/tls`), deps({ request: secure }));
    expect(outcome).toEqual({ kind: "delivered", status: 200 });
    expect(hook.requests[0]).toMatchObject({ servername: "hook.test", remoteAddress: "127.0.0.1" });
    expect(hook.requests[0]!.headers.host).toBe(`hook.test:${hook.port}`);
  });

  test("a certificate for another name fails the attempt (retried), though the address is allowed", async () => {
    if (tls === undefined) throw new Error("openssl is needed to make a test certificate");
    const hook = await receiver(() => ({}), tls);
    const secure = loopbackOnly(createHttpConnector({ ca: tls.cert }));
    connector = secure;
    const outcome = await deliverOnce(delivery(`https://localhost:${hook.port}/`), deps({ request: secure }));
    expect(outcome).toEqual({ kind: "retry", reason: "network error ERR_TLS_CERT_ALTNAME_INVALID" });
    expect(hook.requests).toHaveLength(0);
  });
});
