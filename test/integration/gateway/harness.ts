// Gateway integration harness: a real redis-server, a key prefix per test file, a gateway on port 0 over real HTTP,
// a FakeActor to move tasks, and small JSON-RPC and HTTP+JSON helpers built on fetch.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { type Config, loadConfig } from "../../../src/config/index.ts";
import { type RunningGateway, startGateway } from "../../../src/gateway/index.ts";
import { ClientRegistry, KeySpace } from "../../../src/journal/index.ts";
import { createLogger } from "../../../src/log.ts";
import type { Message } from "../../../src/protocol/index.ts";
import { FakeActor } from "../../support/fake-actor.ts";
import { startRedis, type TestRedis, testPrefix } from "../../support/redis.ts";

export interface Harness {
  server: TestRedis;
  redis: Redis;
  prefix: string;
  keys: KeySpace;
  config: Config;
  env: Record<string, string>;
  gateway: RunningGateway;
  clients: ClientRegistry;
  actor: FakeActor;
  /** Creates a client and returns its id and key. */
  client(input?: { name?: string; profiles?: string[]; limit?: number }): Promise<{ id: string; key: string }>;
  stop(): Promise<void>;
}

export interface HarnessOptions {
  env?: Record<string, string>;
  /** Profiles for a config file of the test's own (profiles come from a file only). */
  profiles?: Record<string, unknown>[];
  /** Reuse a Redis server (the harness then leaves it running). */
  server?: TestRedis;
  /** Runs the gRPC server too, on a free port (gateway.grpcAddress). */
  grpc?: boolean;
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const server = options.server ?? (await startRedis());
  const prefix = testPrefix();
  const env: Record<string, string> = {
    A2A_REDIS_URL: server.url,
    A2A_REDIS_KEY_PREFIX: prefix,
    A2A_SERVER_HOST: "127.0.0.1",
    A2A_LOG_LEVEL: "error",
    ...options.env,
  };
  let dir: string | undefined;
  let file: string | undefined;
  if (options.profiles) {
    dir = mkdtempSync(join(tmpdir(), "a2a-gateway-"));
    file = join(dir, "config.json");
    writeFileSync(file, JSON.stringify({ profiles: options.profiles }));
  }
  const config = loadConfig(file === undefined ? { env } : { env, file });
  const gateway = await startGateway(config, {
    port: 0,
    ...(options.grpc ? { grpcPort: 0 } : {}),
    logger: createLogger("gateway-test", "error"),
  });
  const redis = server.client();
  const keys = new KeySpace(prefix, 1);
  const clients = new ClientRegistry(redis, keys);
  const actor = new FakeActor(server.client(), prefix);
  return {
    server,
    redis,
    prefix,
    keys,
    config,
    env,
    gateway,
    clients,
    actor,
    async client(input = {}) {
      const { record, apiKey } = await clients.add({ name: input.name ?? "test", ...input });
      return { id: record.id, key: apiKey };
    },
    async stop() {
      await gateway.stop();
      if (!options.server) await server.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A profile for a test config file: the given name, a one-line skill, and `extra` fields. */
export function profile(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name,
    handler: "echo",
    description: `The ${name} agent.`,
    skill: { id: name, name, description: `What ${name} does.`, tags: ["test"] },
    ...extra,
  };
}

export interface RpcAnswer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON-RPC answers
  body: any;
}

export interface RpcOptions {
  key?: string | undefined;
  /** The A2A-Version header; null sends none. */
  version?: string | null;
  id?: string | number;
  profile?: string;
  headers?: Record<string, string>;
}

/** POSTs a raw body to a profile's endpoint. */
export async function post(base: string, body: string, options: RpcOptions = {}): Promise<RpcAnswer> {
  const headers: Record<string, string> = { "Content-Type": "application/json", ...options.headers };
  if (options.key !== undefined) headers.Authorization = `Bearer ${options.key}`;
  const version = options.version === undefined ? "1.0" : options.version;
  if (version !== null) headers["A2A-Version"] = version;
  const response = await fetch(`${base}/a2a/${options.profile ?? "echo"}`, { method: "POST", headers, body });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === "" ? undefined : JSON.parse(text) };
}

export interface RestOptions {
  key?: string | undefined;
  /** The A2A-Version header; null sends none. */
  version?: string | null;
  profile?: string;
  headers?: Record<string, string>;
}

/**
 * Calls one HTTP+JSON route: `path` is below the profile's endpoint (`/tasks/t-1`, `/message:send`); `body` is sent as
 * JSON, or as it is when a string.
 */
export async function rest(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  options: RestOptions = {},
): Promise<RpcAnswer> {
  const headers: Record<string, string> = { ...options.headers };
  if (body !== undefined) headers["Content-Type"] ??= "application/a2a+json";
  if (options.key !== undefined) headers.Authorization = `Bearer ${options.key}`;
  const version = options.version === undefined ? "1.0" : options.version;
  if (version !== null) headers["A2A-Version"] = version;
  const response = await fetch(`${base}/a2a/${options.profile ?? "echo"}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === "" ? undefined : JSON.parse(text) };
}

/** Calls one JSON-RPC method. */
export async function rpc(base: string, method: string, params: unknown, options: RpcOptions = {}): Promise<RpcAnswer> {
  const envelope: Record<string, unknown> = { jsonrpc: "2.0", id: options.id ?? 1, method };
  if (params !== undefined) envelope.params = params;
  return await post(base, JSON.stringify(envelope), options);
}

let counter = 0;

/** A user message with a fresh messageId. */
export function message(text: string, extra: Partial<Message> = {}): Message {
  counter += 1;
  return { messageId: `msg-${Date.now()}-${counter}`, role: "ROLE_USER", parts: [{ text }], ...extra };
}

/** The google.rpc details of an error answer: JSON-RPC's `error.data`, HTTP+JSON's `error.details`. */
// biome-ignore lint/suspicious/noExplicitAny: see RpcAnswer
export function details(answer: RpcAnswer): any[] {
  return answer.body.error.data ?? answer.body.error.details ?? [];
}

/** The ErrorInfo detail of an error answer (either binding). */
export function errorInfo(answer: RpcAnswer): {
  "@type": string;
  reason: string;
  domain: string;
  metadata?: Record<string, string>;
} {
  return details(answer).find((detail) => detail["@type"] === "type.googleapis.com/google.rpc.ErrorInfo");
}

/** The RetryInfo detail of an error answer (either binding). */
export function retryInfo(answer: RpcAnswer): { "@type": string; retryDelay: string } | undefined {
  return details(answer).find((detail) => detail["@type"] === "type.googleapis.com/google.rpc.RetryInfo");
}

/** The BadRequest field violations of an error answer (either binding); [] without one. */
export function fieldViolations(answer: RpcAnswer): { field: string; description: string }[] {
  const found = details(answer).find((detail) => detail["@type"] === "type.googleapis.com/google.rpc.BadRequest");
  return found?.fieldViolations ?? [];
}

/** Polls `probe` until it returns true or `timeoutMs` passes. */
export async function eventually(probe: () => Promise<boolean> | boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await Bun.sleep(25);
  }
}
