// The four push notification config methods and the inline config, over real HTTP against a real gateway and Redis:
// results without credentials, the server-assigned id, the per-task limit, every error path of the digest, URLs
// refused at Create without any network call, and another client's task answering exactly like a missing one.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { AgentCard } from "../../../src/protocol/index.ts";
import { keysUnder, startRedis, type TestRedis } from "../../support/redis.ts";
import { errorInfo, type Harness, message, profile, type RpcAnswer, rpc, startHarness } from "../gateway/harness.ts";
import { type Receiver, startReceiver } from "./receiver.ts";

const HOOK = "https://hooks.example.com/a2a?user=7";
const SECRET_CREDENTIALS = "cred-secret-5e1d";

let server: TestRedis;
let h: Harness;
let alice: { id: string; key: string };
let bob: { id: string; key: string };
/** A loopback receiver whose port, and no other of 127.0.0.1, is allow-listed. */
let hook: Receiver;

beforeAll(async () => {
  server = await startRedis();
  hook = await startReceiver();
  h = await startHarness({
    server,
    profiles: [profile("echo"), profile("quiet", { pushNotifications: false })],
    env: {
      A2A_PUSH_ALLOW_HOSTS: `hooks.internal:8080,127.0.0.1:${hook.port}`,
      A2A_PUSH_MAX_CONFIGS_PER_TASK: "2",
    },
  });
  await h.actor.live();
  alice = await h.client({ name: "alice" });
  bob = await h.client({ name: "bob" });
});

afterAll(async () => {
  await h.stop();
  await hook.close();
  await server.stop();
});

async function call(method: string, params: unknown, who = alice, profileName = "echo"): Promise<RpcAnswer> {
  const answer = await rpc(h.gateway.url, method, params, { key: who.key, profile: profileName });
  expect(answer.status).toBe(200);
  return answer;
}

async function newTask(who = alice, profileName = "echo", configuration: Record<string, unknown> = {}) {
  const answer = await call(
    "SendMessage",
    { message: message("hook me"), configuration: { returnImmediately: true, ...configuration } },
    who,
    profileName,
  );
  expect(answer.body.error).toBeUndefined();
  return answer.body.result.task.id as string;
}

/** The stored config as the workers read it (credentials included). */
async function storedConfigs(taskId: string): Promise<Record<string, string>> {
  return await h.redis.hgetall(h.keys.pushConfigs(0, taskId));
}

describe("the four methods", () => {
  test("Create without an id assigns a fresh one, answers the config without credentials, and stores the credentials", async () => {
    const taskId = await newTask();
    const config = { taskId, url: HOOK, token: "tok-1", authentication: { scheme: "Bearer", credentials: "c-1" } };
    const created = await call("CreateTaskPushNotificationConfig", config);
    const id = created.body.result.id as string;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.body.result).toEqual({
      id,
      taskId,
      url: HOOK,
      token: "tok-1",
      authentication: { scheme: "Bearer" },
    });
    expect(JSON.parse((await storedConfigs(taskId))[id] ?? "{}")).toEqual({ ...config, id });
  });

  test("a second Create without an id adds a config and never replaces the first", async () => {
    const taskId = await newTask();
    const first = await call("CreateTaskPushNotificationConfig", { taskId, url: `${HOOK}&n=1` });
    const second = await call("CreateTaskPushNotificationConfig", { taskId, url: `${HOOK}&n=2` });
    expect(second.body.result.id).not.toBe(first.body.result.id);
    const listed = await call("ListTaskPushNotificationConfigs", { taskId });
    const urls = (listed.body.result.configs as { url: string }[]).map((config) => config.url).sort();
    expect(urls).toEqual([`${HOOK}&n=1`, `${HOOK}&n=2`]);
  });

  test("a config made on a finished task is counted in the task's bytes, so it goes (and is given back) with it", async () => {
    const taskId = await newTask();
    await h.actor.complete(await h.actor.takeOne({ taskId }));
    expect(await h.redis.zscore(h.keys.purge(0), taskId)).not.toBeNull();
    const bytesBefore = Number(await h.redis.hget(h.keys.task(0, taskId), "bytes"));
    const clientBefore = Number(await h.redis.hget(h.keys.bytes(0), `client:${alice.id}`));
    await call("CreateTaskPushNotificationConfig", { taskId, id: "late", url: HOOK });
    const stored = (await storedConfigs(taskId)).late ?? "";
    expect(stored.length).toBeGreaterThan(0);
    expect(await h.redis.pttl(h.keys.pushConfigs(0, taskId))).toBe(-1);
    expect(Number(await h.redis.hget(h.keys.task(0, taskId), "bytes"))).toBe(bytesBefore + stored.length);
    expect(Number(await h.redis.hget(h.keys.bytes(0), `client:${alice.id}`))).toBe(clientBefore + stored.length);
    await call("DeleteTaskPushNotificationConfig", { taskId, id: "late" });
    expect(Number(await h.redis.hget(h.keys.task(0, taskId), "bytes"))).toBe(bytesBefore);
    expect(Number(await h.redis.hget(h.keys.bytes(0), `client:${alice.id}`))).toBe(clientBefore);
  });

  test("Get, List and Delete: results without credentials; Delete is idempotent and answers null", async () => {
    const taskId = await newTask();
    const auth = { scheme: "Bearer", credentials: SECRET_CREDENTIALS };
    await call("CreateTaskPushNotificationConfig", { taskId, id: "b", url: `${HOOK}&n=b`, authentication: auth });
    await call("CreateTaskPushNotificationConfig", { taskId, id: "a", url: `${HOOK}&n=a` });

    const got = await call("GetTaskPushNotificationConfig", { taskId, id: "b" });
    expect(got.body.result).toEqual({ id: "b", taskId, url: `${HOOK}&n=b`, authentication: { scheme: "Bearer" } });
    const listed = await call("ListTaskPushNotificationConfigs", { taskId });
    expect(listed.body.result).toEqual({
      configs: [
        { id: "a", taskId, url: `${HOOK}&n=a` },
        { id: "b", taskId, url: `${HOOK}&n=b`, authentication: { scheme: "Bearer" } },
      ],
      nextPageToken: "",
    });
    expect(JSON.stringify([got.body, listed.body])).not.toContain(SECRET_CREDENTIALS);

    for (let i = 0; i < 2; i++) {
      const deleted = await call("DeleteTaskPushNotificationConfig", { taskId, id: "b" });
      expect(deleted.body).toEqual({ jsonrpc: "2.0", id: 1, result: null });
    }
    const gone = await call("GetTaskPushNotificationConfig", { taskId, id: "b" });
    expect(gone.body.error.code).toBe(-32001);
    expect(errorInfo(gone).reason).toBe("TASK_NOT_FOUND");
    const rest = await call("ListTaskPushNotificationConfigs", { taskId });
    expect(rest.body.result.configs.map((c: { id: string }) => c.id)).toEqual(["a"]);
  });

  test("over push.maxConfigsPerTask: -32602 PUSH_CONFIG_LIMIT_EXCEEDED; replacing an existing id is allowed", async () => {
    const taskId = await newTask();
    await call("CreateTaskPushNotificationConfig", { taskId, id: "one", url: HOOK });
    await call("CreateTaskPushNotificationConfig", { taskId, id: "two", url: HOOK });
    const replaced = await call("CreateTaskPushNotificationConfig", { taskId, id: "two", url: `${HOOK}&v=2` });
    expect(replaced.body.result.url).toBe(`${HOOK}&v=2`);
    const third = await call("CreateTaskPushNotificationConfig", { taskId, id: "three", url: HOOK });
    expect(third.body.error.code).toBe(-32602);
    expect(errorInfo(third).reason).toBe("PUSH_CONFIG_LIMIT_EXCEEDED");
    expect(Object.keys(await storedConfigs(taskId)).sort()).toEqual(["one", "two"]);
  });

  test("params errors: -32602 for a missing taskId, url or id, and for a pageToken this server never issued", async () => {
    const taskId = await newTask();
    const cases: [string, unknown, string][] = [
      ["CreateTaskPushNotificationConfig", { url: HOOK }, "taskId"],
      ["CreateTaskPushNotificationConfig", { taskId }, "url"],
      ["GetTaskPushNotificationConfig", { taskId }, "id"],
      ["DeleteTaskPushNotificationConfig", { id: "x" }, "taskId"],
      ["ListTaskPushNotificationConfigs", {}, "taskId"],
      ["ListTaskPushNotificationConfigs", { taskId, pageToken: "bogus" }, "pageToken"],
    ];
    for (const [method, params, field] of cases) {
      const answer = await call(method, params);
      expect(answer.body.error.code).toBe(-32602);
      const bad = answer.body.error.data.find((d: { "@type": string }) => d["@type"].endsWith("BadRequest"));
      expect(bad.fieldViolations.map((v: { field: string }) => v.field)).toContain(field);
    }
  });

  test("an unknown task and an unknown config are -32001", async () => {
    const taskId = await newTask();
    for (const [method, params] of [
      ["CreateTaskPushNotificationConfig", { taskId: "no-such-task", url: HOOK }],
      ["GetTaskPushNotificationConfig", { taskId: "no-such-task", id: "a" }],
      ["ListTaskPushNotificationConfigs", { taskId: "no-such-task" }],
      ["DeleteTaskPushNotificationConfig", { taskId: "no-such-task", id: "a" }],
      ["GetTaskPushNotificationConfig", { taskId, id: "never-made" }],
    ] as const) {
      const answer = await call(method, params);
      expect(answer.body.error.code).toBe(-32001);
      expect(errorInfo(answer).reason).toBe("TASK_NOT_FOUND");
    }
  });
});

describe("another client's task", () => {
  test("answers exactly as a missing task to all four methods, and nothing of it changes", async () => {
    const taskId = await newTask(alice);
    await call("CreateTaskPushNotificationConfig", { taskId, id: "mine", url: HOOK });
    const before = await storedConfigs(taskId);
    const calls = [
      ["CreateTaskPushNotificationConfig", { taskId, id: "theirs", url: HOOK }],
      ["GetTaskPushNotificationConfig", { taskId, id: "mine" }],
      ["ListTaskPushNotificationConfigs", { taskId }],
      ["DeleteTaskPushNotificationConfig", { taskId, id: "mine" }],
    ] as const;
    for (const [method, params] of calls) {
      const foreign = await call(method, params, bob);
      const missing = await call(method, { ...params, taskId: "missing-task" }, bob);
      expect(foreign.body.error.code).toBe(-32001);
      expect(JSON.stringify(foreign.body).replaceAll(taskId, "T")).toBe(
        JSON.stringify(missing.body).replaceAll("missing-task", "T"),
      );
    }
    expect(await storedConfigs(taskId)).toEqual(before);
  });

  test("a task of another profile of the same client is missing too", async () => {
    const taskId = await newTask(alice, "echo");
    const answer = await call("ListTaskPushNotificationConfigs", { taskId }, alice, "quiet");
    expect(answer.body.error.code).toBe(-32003); // quiet offers no push at all: the capability answers first
    const other = await newTask(alice, "quiet");
    const cross = await call("ListTaskPushNotificationConfigs", { taskId: other }, alice, "echo");
    expect(cross.body.error.code).toBe(-32001);
  });
});

describe("request forgery: URLs refused at Create by form and policy, with no network call", () => {
  const refused: [string, string][] = [
    ["http://127.0.0.1/hook", "loopback address 127.0.0.1"],
    ["http://[::1]/hook", "loopback address ::1"],
    ["http://169.254.169.254/latest/meta-data/", "metadata address 169.254.169.254"],
    ["http://10.0.0.1/", "private address 10.0.0.1"],
    ["https://10.0.0.1/", "private address 10.0.0.1"],
    ["http://[::ffff:127.0.0.1]/", "ipv4-mapped loopback address ::ffff:7f00:1"],
    ["https://[fd00:ec2::254]/", "unique-local address fd00:ec2::254"],
    ["http://2130706433/", "loopback address 127.0.0.1"],
    ["http://hooks.example.com/", "scheme http: not allowed"],
    ["https://user:pw@hooks.example.com/", "credentials in url not allowed"],
    ["ftp://hooks.example.com/", "scheme ftp: not allowed"],
    ["not a url", "invalid url"],
  ];
  for (const [url, reason] of refused) {
    test(url, async () => {
      const taskId = await newTask();
      const answer = await call("CreateTaskPushNotificationConfig", { taskId, url });
      expect(answer.body.error.code).toBe(-32602);
      expect(errorInfo(answer).reason).toBe("INVALID_PUSH_NOTIFICATION_CONFIG");
      const bad = answer.body.error.data.find((d: { "@type": string }) => d["@type"].endsWith("BadRequest"));
      expect(bad.fieldViolations).toEqual([{ field: "url", description: reason }]);
      expect(await storedConfigs(taskId)).toEqual({});
    });
  }

  test("an allow-listed host may use http; a name is not resolved at Create (that is the workers' check)", async () => {
    const taskId = await newTask();
    for (const url of ["http://hooks.internal:8080/h", "https://resolves-to-private.example/h"]) {
      const answer = await call("CreateTaskPushNotificationConfig", { taskId, id: url.slice(8, 14), url });
      expect(answer.body.result.url).toBe(url);
    }
  });

  test("with 127.0.0.1:<receiver port> allow-listed, a webhook to the Redis port of 127.0.0.1 is refused", async () => {
    const taskId = await newTask();
    const listed = await call("CreateTaskPushNotificationConfig", {
      taskId,
      url: `http://127.0.0.1:${hook.port}/hook`,
    });
    expect(listed.body.result.url).toBe(`http://127.0.0.1:${hook.port}/hook`);
    const allowed = listed.body.result.id as string;
    for (const url of [`http://127.0.0.1:${server.port}/`, `https://127.0.0.1:${server.port}/`, "http://127.0.0.1/"]) {
      const answer = await call("CreateTaskPushNotificationConfig", { taskId, id: "redis", url });
      expect(answer.body.error.code).toBe(-32602);
      const bad = answer.body.error.data.find((d: { "@type": string }) => d["@type"].endsWith("BadRequest"));
      expect(bad.fieldViolations).toEqual([{ field: "url", description: "loopback address 127.0.0.1" }]);
    }
    // The same at an inline config of SendMessage: refused before the task exists.
    const inline = await call("SendMessage", {
      message: message("to redis"),
      configuration: { taskPushNotificationConfig: { url: `http://127.0.0.1:${server.port}/` } },
    });
    expect(inline.body.error.code).toBe(-32602);
    expect(Object.keys(await storedConfigs(taskId))).toEqual([allowed]);
  });

  test("an allow-listed host is exempt on the port it names only", async () => {
    const taskId = await newTask();
    const answer = await call("CreateTaskPushNotificationConfig", { taskId, url: "http://hooks.internal:8081/h" });
    const bad = answer.body.error.data.find((d: { "@type": string }) => d["@type"].endsWith("BadRequest"));
    expect(bad.fieldViolations).toEqual([{ field: "url", description: "scheme http: not allowed" }]);
  });

  test("values that could never be sent as headers are refused", async () => {
    const taskId = await newTask();
    const cases: [Record<string, unknown>, string][] = [
      [{ token: "a\r\nX-Evil: 1" }, "token"],
      [{ authentication: { scheme: "Bearer token" } }, "authentication.scheme"],
      [{ authentication: { scheme: "Bearer", credentials: "é" } }, "authentication.credentials"],
      [{ id: "has space" }, "id"],
    ];
    for (const [extra, field] of cases) {
      const answer = await call("CreateTaskPushNotificationConfig", { taskId, url: HOOK, ...extra });
      expect(answer.body.error.code).toBe(-32602);
      const bad = answer.body.error.data.find((d: { "@type": string }) => d["@type"].endsWith("BadRequest"));
      expect(bad.fieldViolations.map((v: { field: string }) => v.field)).toEqual([field]);
    }
    expect(await storedConfigs(taskId)).toEqual({});
  });
});

describe("the inline config of SendMessage", () => {
  test("is stored with the task; its id is the task id unless the client gave one", async () => {
    const plain = await newTask(alice, "echo", { taskPushNotificationConfig: { url: HOOK, token: "t" } });
    expect(Object.keys(await storedConfigs(plain))).toEqual([plain]);
    const named = await newTask(alice, "echo", { taskPushNotificationConfig: { id: "mine", url: HOOK } });
    const listed = await call("ListTaskPushNotificationConfigs", { taskId: named });
    expect(listed.body.result.configs).toEqual([{ id: "mine", taskId: named, url: HOOK }]);
  });

  test("a follow-up message's inline config without an id gets a fresh id and never replaces the task's first", async () => {
    const taskId = await newTask(alice, "echo", { taskPushNotificationConfig: { url: `${HOOK}&n=1` } });
    await h.actor.move(await h.actor.takeOne({ taskId }), "TASK_STATE_INPUT_REQUIRED", { text: "more?" });
    const followUp = await call("SendMessage", {
      message: { ...message("here"), taskId },
      configuration: { returnImmediately: true, taskPushNotificationConfig: { url: `${HOOK}&n=2` } },
    });
    expect(followUp.body.error).toBeUndefined();
    const listed = await call("ListTaskPushNotificationConfigs", { taskId });
    const configs = listed.body.result.configs as { id: string; url: string }[];
    expect(configs).toHaveLength(2);
    expect(configs.find((config) => config.id === taskId)?.url).toBe(`${HOOK}&n=1`);
    expect(configs.find((config) => config.id !== taskId)?.url).toBe(`${HOOK}&n=2`);
  });

  test("a refused URL is -32602 and no task is stored", async () => {
    const before = await keysUnder(h.redis, h.prefix);
    const answer = await call("SendMessage", {
      message: message("no"),
      configuration: { returnImmediately: true, taskPushNotificationConfig: { url: "http://169.254.169.254/" } },
    });
    expect(answer.body.error.code).toBe(-32602);
    const bad = answer.body.error.data.find((d: { "@type": string }) => d["@type"].endsWith("BadRequest"));
    expect(bad.fieldViolations).toEqual([
      { field: "configuration.taskPushNotificationConfig.url", description: "metadata address 169.254.169.254" },
    ]);
    expect(await keysUnder(h.redis, h.prefix)).toEqual(before);
  });
});

describe("push notifications not offered: -32003 for all four methods and the inline config", () => {
  async function expectUnsupported(base: string, key: string, profileName: string, taskId: string): Promise<void> {
    const calls: [string, unknown][] = [
      ["CreateTaskPushNotificationConfig", { taskId, url: HOOK }],
      ["GetTaskPushNotificationConfig", { taskId, id: "c" }],
      ["ListTaskPushNotificationConfigs", { taskId }],
      ["DeleteTaskPushNotificationConfig", { taskId, id: "c" }],
      ["SendMessage", { message: message("p"), configuration: { taskPushNotificationConfig: { url: HOOK } } }],
    ];
    for (const [method, params] of calls) {
      const answer = await rpc(base, method, params, { key, profile: profileName });
      expect(answer.body.error.code).toBe(-32003);
      expect(errorInfo(answer)).toMatchObject({
        reason: "PUSH_NOTIFICATION_NOT_SUPPORTED",
        domain: "a2a-protocol.org",
      });
    }
  }

  test("a profile with pushNotifications false; its card says so, the other profile's card says true", async () => {
    const taskId = await newTask(alice, "quiet");
    const before = await keysUnder(h.redis, h.prefix);
    await expectUnsupported(h.gateway.url, alice.key, "quiet", taskId);
    expect(await keysUnder(h.redis, h.prefix)).toEqual(before);
    const cards = await Promise.all(
      ["echo", "quiet"].map(async (name) => {
        const response = await fetch(`${h.gateway.url}/a2a/${name}/.well-known/agent-card.json`);
        return ((await response.json()) as AgentCard).capabilities.pushNotifications;
      }),
    );
    expect(cards).toEqual([true, false]);
  });

  test("push.enabled false: every profile answers -32003 and no card offers push", async () => {
    const off = await startHarness({ server, profiles: [profile("echo")], env: { A2A_PUSH_ENABLED: "false" } });
    try {
      await off.actor.live();
      const carol = await off.client({ name: "carol" });
      const created = await rpc(
        off.gateway.url,
        "SendMessage",
        { message: message("x"), configuration: { returnImmediately: true } },
        { key: carol.key },
      );
      await expectUnsupported(off.gateway.url, carol.key, "echo", created.body.result.task.id);
      const card = (await (await fetch(`${off.gateway.url}/.well-known/agent-card.json`)).json()) as AgentCard;
      expect(card.capabilities.pushNotifications).toBe(false);
    } finally {
      await off.stop();
    }
  });
});
