// Unit tests of the config module: defaults, environment, file loading, validation messages and derived values.
// No network and no process.env: every test passes its own environment and, where needed, its own temp file.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KindGuard, type TSchema } from "@sinclair/typebox";
import {
  type Config,
  ConfigError,
  ConfigSchema,
  configEnvironmentVariables,
  loadConfig,
  type Profile,
  profileIdentity,
  publicUrl,
  requiresFullTextCheck,
  resolvedIdleTimeoutSeconds,
} from "../../../src/config/index.ts";

const tempDir = mkdtempSync(join(tmpdir(), "a2a-config-test-"));
afterAll(() => rmSync(tempDir, { recursive: true, force: true }));

let fileCount = 0;
function configFile(content: unknown): string {
  fileCount += 1;
  const file = join(tempDir, `config-${fileCount}.json`);
  writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content));
  return file;
}

/** The ConfigError that loading throws; fails the test when loading succeeds or throws something else. */
function loadError(options: Parameters<typeof loadConfig>[0]): ConfigError {
  try {
    loadConfig(options);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected loadConfig to throw a ConfigError");
}

const profile = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  description: `The ${name} agent.`,
  handler: "echo",
  skill: { id: name, name, description: `Does ${name} things.` },
  ...extra,
});

function loadProfile(extra: Record<string, unknown>): Profile {
  const [loaded] = loadConfig({ file: configFile({ profiles: [profile("one", extra)] }), env: {} }).profiles;
  if (loaded === undefined) throw new Error("no profile loaded");
  return loaded;
}

describe("defaults", () => {
  test("an empty environment and no file give the documented defaults", () => {
    const config = loadConfig({ env: {} });
    expect(config.server).toEqual({
      host: "0.0.0.0",
      port: 8080,
      publicUrl: "",
      grpcPort: 0,
      grpcPublicAddress: "",
      blockingWaitSeconds: 20,
      maxWaitingRequests: 4,
      storeTimeoutSeconds: 5,
      streamMaxSeconds: 300,
      streamKeepaliveSeconds: 15,
      streamFrameMaxBytes: 1_048_576,
      streamBufferMaxBytes: 4_194_304,
      maxStreamsPerTask: 8,
      maxStreamsPerClient: 64,
      maxStreamsPerInstallation: 10_000,
      maxBodyBytes: 1_048_576,
      maxHistoryBytes: 8_388_608,
      maxListBytes: 8_388_608,
      maxJsonDepth: 32,
      maxPendingAuthentications: 512,
      streamBuffersMaxBytes: 67_108_864,
      idleTimeoutSeconds: 0,
      metricsToken: "",
      cardSigningKeyEnv: "",
      cardSigningKeyId: "",
    });
    expect(config.worker).toEqual({
      livenessSeconds: 120,
      heartbeatSeconds: 5,
      leaseSeconds: 30,
      maxAttempts: 3,
      maxTaskBytes: 33_554_432,
      actors: 2,
      concurrency: 8,
      drainSeconds: 20,
      restartIntensity: 5,
      restartPeriodSeconds: 60,
      stallSeconds: 30,
      actorMaxMemoryMb: 2048,
      reclaimIntervalSeconds: 5,
      sweepBatch: 100,
      metricsPort: 9464,
      metricsHost: "127.0.0.1",
    });
    expect(config.redis).toEqual({
      url: "redis://127.0.0.1:6379",
      keyPrefix: "a2a:",
      shards: 1,
      cluster: [],
      sentinels: [],
      sentinelName: "mymaster",
      sentinelPassword: "",
      ackReplicas: 0,
      ackTimeoutMs: 1000,
      dedupSeconds: 86_400,
    });
    expect(config.push).toEqual({
      enabled: true,
      maxConfigsPerTask: 10,
      allowHosts: [],
      timeoutSeconds: 10,
      maxAttempts: 8,
      retryBaseMs: 1000,
      signingSecrets: [],
    });
    expect(config.log.level).toBe("info");
  });

  test("the default profile is a complete echo profile", () => {
    const config = loadConfig({ env: {} });
    expect(config.profiles).toEqual([
      {
        name: "echo",
        handler: "echo",
        description: "Echoes the text it receives.",
        skill: { id: "echo", name: "Echo", description: "Answers with the text it got.", tags: ["test"] },
        inputModes: ["text/plain"],
        outputModes: ["text/plain"],
        tools: [],
        resources: [],
        identity: "",
        quota: { maxActiveTasks: 0, maxStoredBytes: 0 },
        runTimeoutSeconds: 600,
        inputTimeoutSeconds: 86_400,
        retentionSeconds: 86_400,
        journalRetentionSeconds: 0,
        artifactWriteIntervalMs: 0,
        fullTextCheck: "auto",
        guardrails: { denyPatterns: [], personalData: false, maxLength: 0, timeoutMs: 10_000 },
        streaming: true,
        pushNotifications: true,
      },
    ]);
  });

  test("defaults are applied inside each profile from the file, including nested optional objects", () => {
    const loaded = loadProfile({
      llm: { baseUrl: "https://llm.example.com/v1", model: "m1" },
      guardrails: { moderation: { baseUrl: "https://mod.example.com" } },
    });
    expect(loaded.llm).toEqual({ baseUrl: "https://llm.example.com/v1", model: "m1", maxSteps: 8 });
    expect(loaded.guardrails.moderation).toEqual({ baseUrl: "https://mod.example.com", timeoutMs: 5000 });
    expect(loaded.skill.tags).toEqual([]);
    expect(loaded.quota.maxActiveTasks).toBe(0);
    expect(profileIdentity(loaded)).toBe("one");
  });

  test("every field of the schema has a description", () => {
    const missing: string[] = [];
    const walk = (schema: TSchema, path: string): void => {
      if (path !== "" && typeof schema.description !== "string") missing.push(path);
      if (KindGuard.IsObject(schema))
        for (const [key, child] of Object.entries(schema.properties)) walk(child, path === "" ? key : `${path}.${key}`);
      if (KindGuard.IsArray(schema) && KindGuard.IsObject(schema.items)) walk(schema.items, `${path}[]`);
    };
    walk(ConfigSchema, "");
    expect(missing).toEqual([]);
  });
});

describe("environment", () => {
  test("A2A_* variables override defaults, converted to the schema's types", () => {
    const config = loadConfig({
      env: {
        A2A_SERVER_BLOCKING_WAIT_SECONDS: "45",
        A2A_SERVER_PORT: " 9090 ",
        A2A_SERVER_PUBLIC_URL: "https://agents.example.com/",
        A2A_REDIS_KEY_PREFIX: "test:",
        A2A_WORKER_MAX_ATTEMPTS: "5",
        A2A_PUSH_ENABLED: "false",
        A2A_PUSH_ALLOW_HOSTS: "hooks.example.com, , other.example.com",
        A2A_LOG_LEVEL: "debug",
        UNRELATED: "x",
      },
    });
    expect(config.server.blockingWaitSeconds).toBe(45);
    expect(config.server.port).toBe(9090);
    expect(config.redis.keyPrefix).toBe("test:");
    expect(config.worker.maxAttempts).toBe(5);
    expect(config.push.enabled).toBe(false);
    expect(config.push.allowHosts).toEqual(["hooks.example.com", "other.example.com"]);
    expect(config.log.level).toBe("debug");
    expect(publicUrl(config)).toBe("https://agents.example.com");
  });

  test("the environment wins over the file", () => {
    const file = configFile({ server: { port: 7000, maxWaitingRequests: 9 } });
    const config = loadConfig({ file, env: { A2A_SERVER_PORT: "7001" } });
    expect(config.server.port).toBe(7001);
    expect(config.server.maxWaitingRequests).toBe(9);
  });

  test("REDIS_URL is honoured, A2A_REDIS_URL wins over it, and both win over the file", () => {
    const file = configFile({ redis: { url: "redis://from-file:6379" } });
    expect(loadConfig({ file, env: {} }).redis.url).toBe("redis://from-file:6379");
    expect(loadConfig({ file, env: { REDIS_URL: "redis://plain:6379" } }).redis.url).toBe("redis://plain:6379");
    const both = { REDIS_URL: "redis://plain:6379", A2A_REDIS_URL: "redis://prefixed:6379" };
    expect(loadConfig({ file, env: both }).redis.url).toBe("redis://prefixed:6379");
  });

  test("a non-numeric value for a number is an error naming the variable", () => {
    const error = loadError({ env: { A2A_SERVER_PORT: "eighty", A2A_PUSH_ENABLED: "maybe" } });
    expect(error.problems).toEqual([
      'server.port: A2A_SERVER_PORT must be a number (got "eighty")',
      'push.enabled: A2A_PUSH_ENABLED must be true or false (got "maybe")',
    ]);
  });

  test("an empty value for a number is an error, not a silent default", () => {
    expect(loadError({ env: { A2A_WORKER_ACTORS: "" } }).problems).toEqual([
      'worker.actors: A2A_WORKER_ACTORS must be a number (got "")',
    ]);
  });

  test("configEnvironmentVariables derives every scalar key from the schema, unique, without profiles", () => {
    const rows = configEnvironmentVariables();
    const byEnv = new Map(rows.map((row) => [row.env, row]));
    expect(byEnv.size).toBe(rows.length);
    expect(byEnv.get("A2A_SERVER_BLOCKING_WAIT_SECONDS")).toMatchObject({
      path: "server.blockingWaitSeconds",
      default: 20,
    });
    expect(byEnv.get("A2A_SERVER_BLOCKING_WAIT_SECONDS")?.description).toContain("proxy");
    expect(byEnv.get("A2A_REDIS_KEY_PREFIX")).toMatchObject({ path: "redis.keyPrefix", default: "a2a:" });
    expect(byEnv.get("A2A_WORKER_MAX_ATTEMPTS")).toMatchObject({ path: "worker.maxAttempts", default: 3 });
    expect(byEnv.get("A2A_PUSH_ALLOW_HOSTS")).toMatchObject({ path: "push.allowHosts", default: [] });
    expect(byEnv.get("REDIS_URL")).toMatchObject({ path: "redis.url" });
    expect(byEnv.get("OTEL_SERVICE_NAME")).toMatchObject({ path: "tracing.serviceName" });
    expect(rows.some((row) => row.path.startsWith("profiles"))).toBe(false);
    for (const row of rows) expect(row.description).not.toBe("");
    const defaults = loadConfig({ env: {} });
    const scalarKeys = (["server", "worker", "redis", "clients", "push", "log", "tracing"] as const).flatMap(
      (section) => Object.keys(defaults[section]).map((key) => `${section}.${key}`),
    );
    expect(new Set(rows.map((row) => row.path))).toEqual(new Set([...scalarKeys, "handlers"]));
  });
});

describe("validation", () => {
  test.each([101, 150])("server.blockingWaitSeconds %d is rejected, not clamped", (seconds) => {
    const fromEnv = loadError({ env: { A2A_SERVER_BLOCKING_WAIT_SECONDS: String(seconds) } });
    expect(fromEnv.problems).toEqual([
      `server.blockingWaitSeconds: must be at most 100 (got ${seconds}) (from A2A_SERVER_BLOCKING_WAIT_SECONDS)`,
    ]);
    const fromFile = loadError({ file: configFile({ server: { blockingWaitSeconds: seconds } }), env: {} });
    expect(fromFile.problems).toEqual([`server.blockingWaitSeconds: must be at most 100 (got ${seconds})`]);
  });

  test("100 seconds is the largest accepted blocking wait", () => {
    expect(loadConfig({ env: { A2A_SERVER_BLOCKING_WAIT_SECONDS: "100" } }).server.blockingWaitSeconds).toBe(100);
  });

  test("several problems are listed together, one per line, each naming its path", () => {
    const file = configFile({
      server: { port: 0, streamKeepaliveSeconds: 30 },
      worker: { heartbeatSeconds: 120 },
      redis: { keyPrefix: "a2a" },
      log: { level: "loud" },
    });
    const error = loadError({ file, env: { A2A_WORKER_CONCURRENCY: "1.5" } });
    expect(error.problems).toEqual([
      "server.port: must be at least 1 (got 0)",
      "server.streamKeepaliveSeconds: must be at most 15 (got 30)",
      "worker.concurrency: must be an integer (got 1.5) (from A2A_WORKER_CONCURRENCY)",
      'redis.keyPrefix: must end with ":" (got "a2a")',
      'log.level: must be one of "trace", "debug", "info", "warn", "error", "fatal", "silent" (got "loud")',
      "worker.heartbeatSeconds: must be lower than worker.livenessSeconds (120) (got 120)",
    ]);
    for (const problem of error.problems) expect(error.message).toContain(`\n  ${problem}`);
    expect(error.message.split("\n")[0]).toBe("Invalid configuration (6 problems):");
  });

  test("relations between keys are checked: heartbeat below liveness, buffer at least one frame", () => {
    const file = configFile({
      server: { streamFrameMaxBytes: 2048, streamBufferMaxBytes: 1024 },
      worker: { heartbeatSeconds: 120 },
    });
    expect(loadError({ file, env: {} }).problems).toEqual([
      "server.streamBufferMaxBytes: must be at least server.streamFrameMaxBytes (2048) (got 1024)",
      "worker.heartbeatSeconds: must be lower than worker.livenessSeconds (120) (got 120)",
    ]);
  });

  test("the watchdog keys and a profile's time limit are bounded: stall at least 2 s, memory 0 or at least 128 MiB", () => {
    const file = configFile({ profiles: [profile("slow", { runTimeoutSeconds: 0 })] });
    expect(
      loadError({ file, env: { A2A_WORKER_STALL_SECONDS: "1", A2A_WORKER_ACTOR_MAX_MEMORY_MB: "100" } }).problems,
    ).toEqual([
      "worker.stallSeconds: must be at least 2 (got 1) (from A2A_WORKER_STALL_SECONDS)",
      'profiles[0] (name "slow").runTimeoutSeconds: must be at least 1 (got 0)',
      "worker.actorMaxMemoryMb: must be 0 (no limit) or at least 128: an idle actor holds about 70 MiB (got 100) " +
        "(from A2A_WORKER_ACTOR_MAX_MEMORY_MB)",
    ]);
    const ok = loadConfig({ env: { A2A_WORKER_STALL_SECONDS: "2", A2A_WORKER_ACTOR_MAX_MEMORY_MB: "0" } });
    expect([ok.worker.stallSeconds, ok.worker.actorMaxMemoryMb]).toEqual([2, 0]);
    expect(loadConfig({ env: { A2A_WORKER_ACTOR_MAX_MEMORY_MB: "128" } }).worker.actorMaxMemoryMb).toBe(128);
  });

  test("a profile's artifactWriteIntervalMs is a whole number of ms from 0 to 5000", () => {
    const file = configFile({
      profiles: [
        profile("slow", { artifactWriteIntervalMs: 5001 }),
        profile("back", { artifactWriteIntervalMs: -1 }),
        profile("half", { artifactWriteIntervalMs: 2.5 }),
      ],
    });
    expect(loadError({ file, env: {} }).problems).toEqual([
      'profiles[0] (name "slow").artifactWriteIntervalMs: must be at most 5000 (got 5001)',
      'profiles[1] (name "back").artifactWriteIntervalMs: must be at least 0 (got -1)',
      'profiles[2] (name "half").artifactWriteIntervalMs: must be an integer (got 2.5)',
    ]);
    expect(loadProfile({ artifactWriteIntervalMs: 5000 }).artifactWriteIntervalMs).toBe(5000);
    expect(loadProfile({}).artifactWriteIntervalMs).toBe(0);
  });

  test("unknown keys in the file are rejected, with a suggestion for a likely typo", () => {
    const file = configFile({
      server: { blockingWaitSecond: 30 },
      extra: true,
      profiles: [profile("a", { tool: [] })],
    });
    expect(loadError({ file, env: {} }).problems).toEqual([
      "extra: unknown key",
      'server.blockingWaitSecond: unknown key (did you mean "blockingWaitSeconds"?)',
      'profiles[0] (name "a").tool: unknown key (did you mean "tools"?)',
    ]);
  });

  test("a section given as an array is an error, not merged into the defaults", () => {
    const file = configFile({ server: [8080] });
    expect(loadError({ file, env: {} }).problems).toEqual(["server: must be an object (got [8080])"]);
  });

  test("duplicate profile names are an error naming both indexes", () => {
    const file = configFile({ profiles: [profile("support"), profile("sales"), profile("support")] });
    expect(loadError({ file, env: {} }).problems).toEqual([
      'profiles[2] (name "support").name: duplicate profile name "support": also profiles[0]',
    ]);
  });

  test("an extended card's skill ids are unique in the card, the profile's skill included", () => {
    const skill = (id: string) => ({ id, name: id, description: `Does ${id}.` });
    const extendedCard = { skills: [skill("more"), skill("support"), skill("more")] };
    const file = configFile({ profiles: [profile("support", { extendedCard })] });
    expect(loadError({ file, env: {} }).problems).toEqual([
      'profiles[0] (name "support").extendedCard.skills[1].id: duplicate skill id "support" in the card',
      'profiles[0] (name "support").extendedCard.skills[2].id: duplicate skill id "more" in the card',
    ]);
    const loaded = loadProfile({ extendedCard: { skills: [skill("more")] } });
    expect(loaded.extendedCard?.skills).toEqual([{ ...skill("more"), tags: [] }]);
  });

  test("profile fields are validated with the profile named", () => {
    const file = configFile({
      profiles: [
        profile("ok"),
        { ...profile("Bad Name"), handler: "" },
        profile("llm", { llm: { baseUrl: "not a url", model: "m", apiKeyEnv: "sk-abc123" } }),
      ],
    });
    expect(loadError({ file, env: {} }).problems).toEqual([
      'profiles[1] (name "Bad Name").name: must match ^[a-z0-9][a-z0-9-]{0,62}$ (got "Bad Name")',
      'profiles[1] (name "Bad Name").handler: must not be empty',
      'profiles[2] (name "llm").llm.apiKeyEnv: must be the name of an environment variable (the key itself never goes ' +
        'in the config) (got "sk-abc123")',
    ]);
  });

  test("a missing required profile field is reported once", () => {
    const file = configFile({
      profiles: [{ name: "x", handler: "echo", skill: { id: "x", name: "X", description: "d" } }],
    });
    expect(loadError({ file, env: {} }).problems).toEqual(['profiles[0] (name "x").description: is required']);
  });

  test("an invalid regular expression deny pattern names the profile and the field", () => {
    const file = configFile({
      profiles: [
        profile("general"),
        profile("support", { guardrails: { denyPatterns: ["plain text", "/secret(\\d+/i", "/ok/i", "/x/g"] } }),
      ],
    });
    const problems = loadError({ file, env: {} }).problems;
    expect(problems).toHaveLength(2);
    expect(problems[0]).toStartWith(
      'profiles[1] (name "support").guardrails.denyPatterns[1]: invalid regular expression: ',
    );
    expect(problems[1]).toBe(
      'profiles[1] (name "support").guardrails.denyPatterns[3]: invalid regular expression: flags g and y are not ' +
        'allowed (got "g")',
    );
  });

  test("URLs are checked for their scheme", () => {
    const file = configFile({ redis: { url: "http://127.0.0.1:6379" }, server: { publicUrl: "agents.example.com" } });
    expect(loadError({ file, env: {} }).problems).toEqual([
      'server.publicUrl: must be a http:// or https:// URL (got "agents.example.com")',
      'redis.url: must be a redis://, rediss://, or unix:// URL (got "http://127.0.0.1:6379")',
    ]);
  });

  test("a Unix socket URL names a path, credentials on localhost and at most a database", () => {
    const good = ["unix:///run/redis/redis.sock", "unix://app:s3cret@localhost/run/redis.sock?db=2"];
    for (const url of good) expect(loadConfig({ env: { A2A_REDIS_URL: url } }).redis.url).toBe(url);
    const tail = "(a Unix socket URL: unix:///path/to/redis.sock[?db=N]) (from A2A_REDIS_URL)";
    const problems = (url: string, env: Record<string, string> = {}) =>
      loadError({ env: { A2A_REDIS_URL: url, ...env } }).problems;
    expect(problems("unix://run/redis.sock")).toEqual([
      `redis.url: names the host "run": a socket's path starts after unix:// (unix:///path) ${tail}`,
    ]);
    expect(problems("unix:///run/redis.sock?password=s3cret&db=x")).toEqual([
      `redis.url: has query parameters other than db (password); has db="x", not a database number ${tail}`,
    ]);
    expect(problems("unix://")).toEqual([`redis.url: names no socket path ${tail}`]);
    expect(problems("unix:///run/redis.sock", { A2A_REDIS_CLUSTER: "127.0.0.1:7000" })).toEqual([
      "redis.url: is a socket, while redis.cluster or redis.sentinels name the servers (use redis:// or " +
        `rediss://) ${tail}`,
    ]);
  });

  test("push.allowHosts entries must be host, host:port, host:* or *.suffix, IPv6 in brackets", () => {
    const good = ["hooks.internal", "127.0.0.1:8080", "[::1]:9000", "*.hooks.internal:*", "Hooks.Internal.:443"];
    expect(loadConfig({ file: configFile({ push: { allowHosts: good } }), env: {} }).push.allowHosts).toEqual(good);
    const file = configFile({ push: { allowHosts: ["127.0.0.1:0", "::1", "hooks/x", "[::1"] } });
    const forms = "must be host, host:port, host:* or *.suffix with the same port forms, an IPv6 address in brackets";
    expect(loadError({ file, env: {} }).problems).toEqual([
      `push.allowHosts[0]: ${forms}: the port must be 1 to 65535, or * for any port (got "127.0.0.1:0")`,
      `push.allowHosts[1]: ${forms}: write an IPv6 address in brackets, e.g. [::1] or [::1]:8080 (got "::1")`,
      `push.allowHosts[2]: ${forms}: not a host name (got "hooks/x")`,
      `push.allowHosts[3]: ${forms}: [ without ] (got "[::1")`,
    ]);
    expect(loadError({ env: { A2A_PUSH_ALLOW_HOSTS: "ok.example, *.10.0.0.1" } }).problems).toEqual([
      'push.allowHosts[1]: *. must be followed by a domain name (got "*.10.0.0.1") (from A2A_PUSH_ALLOW_HOSTS)',
    ]);
  });

  test("the result is deeply frozen: assignment throws in strict mode", () => {
    const config: Config = loadConfig({ env: {} });
    expect(Object.isFrozen(config)).toBe(true);
    expect(() => {
      config.server.blockingWaitSeconds = 99;
    }).toThrow(TypeError);
    expect(() => {
      config.push.allowHosts.push("evil.example.com");
    }).toThrow(TypeError);
    const [echo] = config.profiles;
    expect(() => {
      if (echo !== undefined) echo.guardrails.denyPatterns[0] = "x";
    }).toThrow(TypeError);
    expect(config.server.blockingWaitSeconds).toBe(20);
  });
});

describe("file", () => {
  test("a JSON file is loaded, and env.A2A_CONFIG names it when no file option is given", () => {
    const file = configFile({
      server: { port: 9100, publicUrl: "https://a.example.com" },
      profiles: [profile("support")],
    });
    const direct = loadConfig({ file, env: {} });
    expect(direct.server.port).toBe(9100);
    expect(direct.server.blockingWaitSeconds).toBe(20);
    expect(direct.profiles.map((p) => p.name)).toEqual(["support"]);
    expect(loadConfig({ env: { A2A_CONFIG: file } })).toEqual(direct);
  });

  test("the file option wins over A2A_CONFIG", () => {
    const chosen = configFile({ server: { port: 9201 } });
    const ignored = configFile({ server: { port: 9202 } });
    expect(loadConfig({ file: chosen, env: { A2A_CONFIG: ignored } }).server.port).toBe(9201);
  });

  test("an unreadable file is an error naming the file", () => {
    const missing = join(tempDir, "missing.json");
    const error = loadError({ file: missing, env: {} });
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]).toStartWith(`config file ${JSON.stringify(missing)}: cannot be read`);
  });

  test("a file that is not JSON is an error naming the file, listed with the environment's problems", () => {
    const file = configFile("{ server: ");
    const error = loadError({ file, env: { A2A_SERVER_PORT: "x" } });
    expect(error.problems).toHaveLength(2);
    expect(error.problems[0]).toStartWith(`config file ${JSON.stringify(file)}: is not valid JSON`);
    expect(error.problems[1]).toBe('server.port: A2A_SERVER_PORT must be a number (got "x")');
  });

  test("profiles come only from the file", () => {
    expect(loadConfig({ env: { A2A_PROFILES: "x" } }).profiles.map((p) => p.name)).toEqual(["echo"]);
    const file = configFile({ profiles: [] });
    expect(loadError({ file, env: {} }).problems).toEqual(["profiles: must have at least 1 item(s)"]);
  });
});

describe("requiresFullTextCheck", () => {
  test("required is always true and off is always false", () => {
    expect(requiresFullTextCheck(loadProfile({ fullTextCheck: "required" }))).toBe(true);
    expect(requiresFullTextCheck(loadProfile({ fullTextCheck: "off", guardrails: { denyPatterns: ["secret"] } }))).toBe(
      false,
    );
  });

  test("auto is false without output guardrails", () => {
    expect(requiresFullTextCheck(loadProfile({}))).toBe(false);
    expect(requiresFullTextCheck(loadProfile({ fullTextCheck: "auto", inputSchema: { type: "object" } }))).toBe(false);
  });

  test.each([
    ["deny patterns", { guardrails: { denyPatterns: ["secret"] } }],
    ["personal data", { guardrails: { personalData: true } }],
    ["max length", { guardrails: { maxLength: 500 } }],
    ["moderation", { guardrails: { moderation: { baseUrl: "https://mod.example.com" } } }],
    ["output schema", { outputSchema: { type: "object" } }],
  ])("auto is true with %s", (_, extra) => {
    expect(requiresFullTextCheck(loadProfile(extra))).toBe(true);
  });
});

describe("derived values", () => {
  test("the idle timeout is derived as max(blocking wait, keep-alive) + 10 when 0", () => {
    expect(resolvedIdleTimeoutSeconds(loadConfig({ env: {} }))).toBe(30);
    const short = loadConfig({
      env: { A2A_SERVER_BLOCKING_WAIT_SECONDS: "5", A2A_SERVER_STREAM_KEEPALIVE_SECONDS: "12" },
    });
    expect(resolvedIdleTimeoutSeconds(short)).toBe(22);
  });

  test("an explicit idle timeout is used when it exceeds both", () => {
    const config = loadConfig({ env: { A2A_SERVER_IDLE_TIMEOUT_SECONDS: "21" } });
    expect(resolvedIdleTimeoutSeconds(config)).toBe(21);
  });

  test.each([20, 15, 5])("an explicit idle timeout of %d (not above the blocking wait of 20) is rejected", (value) => {
    const error = loadError({ env: { A2A_SERVER_IDLE_TIMEOUT_SECONDS: String(value) } });
    expect(error.problems).toEqual([
      "server.idleTimeoutSeconds: must exceed server.blockingWaitSeconds (20) and server.streamKeepaliveSeconds " +
        `(15), or be 0 to derive it (got ${value}) (from A2A_SERVER_IDLE_TIMEOUT_SECONDS)`,
    ]);
  });

  test("the public URL is derived from host and port when not configured", () => {
    expect(publicUrl(loadConfig({ env: {} }))).toBe("http://localhost:8080");
    expect(publicUrl(loadConfig({ env: { A2A_SERVER_PORT: "9000", A2A_SERVER_HOST: "::" } }))).toBe(
      "http://localhost:9000",
    );
    expect(publicUrl(loadConfig({ env: { A2A_SERVER_HOST: "10.0.0.5" } }))).toBe("http://10.0.0.5:8080");
  });
});

test("a profile's inputSchema or outputSchema that is not a usable JSON Schema is a start-up error naming it", () => {
  const dir = mkdtempSync(join(tempDir, "a2a-config-"));
  const file = join(dir, "config.json");
  const profile = {
    name: "orders",
    description: "d",
    handler: "echo",
    skill: { id: "s", name: "S", description: "d" },
  };
  writeFileSync(file, JSON.stringify({ profiles: [{ ...profile, outputSchema: { type: "strnig" } }] }));
  expect(() => loadConfig({ file, env: {} })).toThrow(
    /profiles\[0\] \(name "orders"\)\.outputSchema: not a usable JSON Schema/,
  );
});
