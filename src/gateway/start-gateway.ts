// Starts one gateway process: two Redis connections (commands, and the journal tail's subscriber) however many
// requests wait, the Elysia app behind the runtime seam, and an orderly stop that leaks no waiting lease.
import { Redis } from "ioredis";
import { ulid } from "ulid";
import { type Config, publicUrl, resolvedIdleTimeoutSeconds } from "../config/index.ts";
import { CapacityLeases, ClientRegistry, KeySpace, TaskJournal } from "../journal/index.ts";
import { createLogger, type Logger } from "../log.ts";
import { AgentCards } from "./agent-card.ts";
import { createGatewayApp } from "./app.ts";
import { Authenticator } from "./authenticator.ts";
import { type GatewayContext, profileRuntimes } from "./gateway-context.ts";
import { JournalTail } from "./journal-tail.ts";
import { serve } from "./serve.ts";
import { DEFAULT_WAITING_LEASE_TTL_MS, WaitingLeases } from "./waiting-leases.ts";

export interface StartGatewayOptions {
  /** Overrides server.port; 0 picks a free port. */
  port?: number;
  logger?: Logger;
}

export interface RunningGateway {
  /** Where this process listens, e.g. http://127.0.0.1:8080 (cards advertise server.publicUrl when set). */
  readonly url: string;
  readonly port: number;
  /** Ends waits (they answer with their task id), releases waiting leases, closes the server and Redis. */
  stop(): Promise<void>;
}

const WILDCARD_HOSTS = new Set(["0.0.0.0", "::", "[::]"]);
/** How long stop() lets in-flight requests finish their answers, in ms. */
const DRAIN_MS = 2000;

function connect(config: Config, name: string, logger: Logger): Redis {
  const redis = new Redis(config.redis.url, {
    connectionName: name,
    maxRetriesPerRequest: 1,
    enableAutoPipelining: name === "a2a-gateway",
  });
  let healthy = true;
  redis.on("error", (error: Error) => {
    if (healthy) logger.warn({ connection: name, err: error.message }, "Redis connection failed; retrying");
    healthy = false;
  });
  redis.on("ready", () => {
    healthy = true;
  });
  return redis;
}

/** Starts the gateway; rejects when Redis does not answer or a profile's inputSchema cannot be checked. */
export async function startGateway(config: Config, options: StartGatewayOptions = {}): Promise<RunningGateway> {
  const logger = options.logger ?? createLogger("gateway", config.log.level);
  const profiles = profileRuntimes(config);
  const redis = connect(config, "a2a-gateway", logger);
  const subscriber = connect(config, "a2a-gateway-tail", logger);
  const closeRedis = () => {
    redis.disconnect();
    subscriber.disconnect();
  };
  try {
    await redis.ping();
  } catch (error) {
    closeRedis();
    throw new Error("Redis does not answer; the gateway needs it to start", { cause: error });
  }
  const keys = new KeySpace(config.redis.keyPrefix, config.redis.shards);
  const retryAfterSeconds = config.worker.heartbeatSeconds;
  const journal = new TaskJournal(redis, keys, {
    livenessSeconds: config.worker.livenessSeconds,
    dedupSeconds: config.redis.dedupSeconds,
    retryAfterSeconds,
  });
  const tail = new JournalTail({ subscriber, redis, journal, keys, logger });
  await tail.start();
  const gatewayId = ulid().toLowerCase();
  const waiting = new WaitingLeases({
    leases: new CapacityLeases(redis),
    key: keys.waiting(),
    gatewayId,
    max: config.server.maxWaitingRequests,
    ttlMs: DEFAULT_WAITING_LEASE_TTL_MS,
    logger,
  });
  let baseUrl = publicUrl(config);
  let requests = 0;
  let inFlight = 0;
  const context: GatewayContext = {
    config,
    keys,
    redis,
    journal,
    tail,
    waiting,
    auth: new Authenticator(new ClientRegistry(redis, keys)),
    profiles,
    cards: new AgentCards(config.profiles, () => baseUrl),
    logger,
    retryAfterSeconds,
    nextRequestId: () => (++requests).toString(36),
  };
  const app = createGatewayApp(context);
  const host = config.server.host;
  const served = serve({
    fetch: async (request) => {
      inFlight++;
      try {
        return await app.handle(request);
      } finally {
        inFlight--;
      }
    },
    hostname: host,
    port: options.port ?? config.server.port,
    idleTimeoutSeconds: resolvedIdleTimeoutSeconds(config),
    maxRequestBodyBytes: config.server.maxBodyBytes + 1_048_576,
  });
  if (config.server.publicUrl === "")
    baseUrl = publicUrl({ ...config, server: { ...config.server, port: served.port } });
  const dialHost = WILDCARD_HOSTS.has(host) ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
  const url = `http://${dialHost}:${served.port}`;
  logger.info({ url, gatewayId, profiles: [...profiles.keys()] }, "gateway listening");

  let stopping: Promise<void> | undefined;
  const stop = async (): Promise<void> => {
    await tail.stop();
    const drainUntil = Date.now() + DRAIN_MS;
    while (inFlight > 0 && Date.now() < drainUntil) await new Promise((resolve) => setTimeout(resolve, 20));
    await served.stop();
    await waiting.stop();
    await Promise.allSettled([redis.quit(), subscriber.quit()]);
    closeRedis();
    logger.info({ gatewayId }, "gateway stopped");
  };
  return {
    url,
    port: served.port,
    stop: () => {
      stopping ??= stop();
      return stopping;
    },
  };
}
