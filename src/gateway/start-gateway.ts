// Starts one gateway process: two Redis connections (commands, and the journal tail's subscriber) however many
// requests wait or stream, over whichever binding, the Elysia app behind the runtime seam, the gRPC server when
// server.grpcPort is set, and an orderly stop that leaks no lease.
import { ulid } from "ulid";
import {
  type Config,
  clientWaitingShare,
  grpcPublicAddress,
  publicUrl,
  resolvedIdleTimeoutSeconds,
} from "../config/index.ts";
import {
  CapacityLeases,
  ClientRegistry,
  createRedis,
  KeySpace,
  RateLimits,
  type RedisLike,
  TaskJournal,
} from "../journal/index.ts";
import { createLogger, type Logger } from "../log.ts";
import { startTracing } from "../tracing/index.ts";
import { AgentCards } from "./agent-card.ts";
import { createGatewayApp, routable } from "./app.ts";
import { Authenticator } from "./authenticator.ts";
import { CardSigner } from "./card-signer.ts";
import { type GatewayContext, profileRuntimes } from "./gateway-context.ts";
import type { GrpcServed } from "./grpc-server.ts";
import { JournalTail } from "./journal-tail.ts";
import { GatewayMetrics } from "./metrics.ts";
import { cardProfiles } from "./push-config-rules.ts";
import { Revocations } from "./revocations.ts";
import { serve } from "./serve.ts";
import { StreamHub } from "./stream-hub.ts";
import { DEFAULT_STREAM_LEASE_TTL_MS, StreamLeases } from "./stream-leases.ts";
import { DEFAULT_WAITING_LEASE_TTL_MS, WaitingLeases } from "./waiting-leases.ts";

export interface StartGatewayOptions {
  /** Overrides server.port; 0 picks a free port. */
  port?: number;
  /** Runs the gRPC server on this port whatever server.grpcPort says; 0 picks a free port. */
  grpcPort?: number;
  logger?: Logger;
  /** The PEM private key that signs agent cards: the value of the variable server.cardSigningKeyEnv names. */
  cardSigningKey?: string | undefined;
}

export interface RunningGateway {
  /** Where this process listens, e.g. http://127.0.0.1:8080 (cards advertise server.publicUrl when set). */
  readonly url: string;
  readonly port: number;
  /** host:port of this process's gRPC server (e.g. 127.0.0.1:50051), when one runs. */
  readonly grpcAddress: string | undefined;
  /** What this process holds now: open SSE streams, streams holding leases, tasks its journal tail follows. */
  stats(): GatewayStats;
  /**
   * Ends streams (they close; their tasks go on) and waits (they answer with their task id), releases stream and
   * waiting leases, closes the server and Redis.
   */
  stop(): Promise<void>;
}

export interface GatewayStats {
  readonly streams: number;
  readonly streamLeases: number;
  readonly followedTasks: number;
}

const WILDCARD_HOSTS = new Set(["0.0.0.0", "::", "[::]"]);
/** How long stop() lets in-flight requests finish their answers, in ms. */
const DRAIN_MS = 2000;

function connect(config: Config, name: string, logger: Logger, onError: () => void): RedisLike {
  const redis = createRedis(config.redis, name, { maxRetriesPerRequest: 1 });
  let healthy = true;
  redis.on("error", (error: Error) => {
    onError();
    if (healthy) logger.warn({ connection: name, err: error.message }, "Redis connection failed; retrying");
    healthy = false;
  });
  redis.on("ready", () => {
    healthy = true;
  });
  return redis;
}

/** The card signer when server.cardSigningKeyEnv is set; throws when its key is missing or unusable. */
function cardSigner(config: Config, pem: string | undefined): CardSigner | undefined {
  const { cardSigningKeyEnv, cardSigningKeyId } = config.server;
  if (cardSigningKeyEnv === "") return undefined;
  if (pem === undefined || pem.trim() === "") {
    throw new Error(`server.cardSigningKeyEnv names ${cardSigningKeyEnv}, but that variable holds no key`);
  }
  return CardSigner.fromPem(pem, cardSigningKeyId);
}

/** Starts the gateway; rejects when Redis does not answer or a profile's inputSchema cannot be checked. */
export async function startGateway(config: Config, options: StartGatewayOptions = {}): Promise<RunningGateway> {
  const logger = options.logger ?? createLogger("gateway", config.log.level);
  const tracing = await startTracing(config.tracing);
  const profiles = profileRuntimes(config);
  const signer = cardSigner(config, options.cardSigningKey);
  let metrics: GatewayMetrics | undefined;
  const redisError = (connection: string) => () => metrics?.redisErrors.inc({ connection });
  const redis = connect(config, "a2a-gateway", logger, redisError("command"));
  const subscriber = connect(config, "a2a-gateway-tail", logger, redisError("subscriber"));
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
    maxPushConfigsPerTask: config.push.maxConfigsPerTask,
    maxHistoryBytes: config.server.maxHistoryBytes,
    clients: config.clients,
    ack: { replicas: config.redis.ackReplicas, timeoutMs: config.redis.ackTimeoutMs },
  });
  const gatewayId = ulid().toLowerCase();
  const tail = new JournalTail({ subscriber, journal, keys, logger, gatewayId });
  await tail.start();
  const waiting = new WaitingLeases({
    leases: new CapacityLeases(redis),
    keys,
    gatewayId,
    max: config.server.maxWaitingRequests,
    maxPerClient: clientWaitingShare(config),
    ttlMs: DEFAULT_WAITING_LEASE_TTL_MS,
    logger,
  });
  const { server } = config;
  const streams = new StreamHub({
    keepaliveMs: server.streamKeepaliveSeconds * 1000,
    maxDurationMs: server.streamMaxSeconds * 1000,
    maxBufferedBytes: server.streamBuffersMaxBytes,
    logger,
  });
  const streamLeases = new StreamLeases({
    leases: new CapacityLeases(redis),
    keys,
    gatewayId,
    limits: {
      perTask: server.maxStreamsPerTask,
      perClient: server.maxStreamsPerClient,
      perInstallation: server.maxStreamsPerInstallation,
    },
    ttlMs: DEFAULT_STREAM_LEASE_TTL_MS,
    retryAfterSeconds,
    logger,
  });
  metrics = new GatewayMetrics({ redis, keys, config, openStreams: () => streams.size, logger });
  const registry = new ClientRegistry(redis, keys);
  const auth = new Authenticator(registry, { maxPending: server.maxPendingAuthentications });
  const revocations = new Revocations({ subscriber, registry, keys, streams, auth, logger });
  await revocations.start();
  let baseUrl = publicUrl(config);
  let grpcAddress: string | undefined;
  let requests = 0;
  let inFlight = 0;
  const context: GatewayContext = {
    config,
    keys,
    redis,
    journal,
    tail,
    waiting,
    streams,
    streamLeases,
    rateLimits: new RateLimits(redis, keys),
    auth,
    profiles,
    cards: new AgentCards(
      cardProfiles(config),
      () => baseUrl,
      signer,
      () => grpcAddress,
    ),
    logger,
    metrics,
    retryAfterSeconds,
    nextRequestId: () => (++requests).toString(36),
  };
  const app = createGatewayApp(context);
  const host = config.server.host;
  const grpcPort = options.grpcPort ?? (config.server.grpcPort > 0 ? config.server.grpcPort : undefined);
  let grpc: GrpcServed | undefined;
  if (grpcPort !== undefined) {
    try {
      // loaded only here: @grpc/grpc-js is a fifth of a process's start-up, and most gateways serve no gRPC
      const { startGrpcServer } = await import("./grpc-server.ts");
      grpc = await startGrpcServer(context, host, grpcPort);
    } catch (error) {
      revocations.stop();
      await tail.stop();
      closeRedis();
      throw new Error(`The gRPC server cannot listen on ${host}:${grpcPort}`, { cause: error });
    }
    grpcAddress = grpcPublicAddress(config, grpc.port);
  }
  let served: ReturnType<typeof serve>;
  try {
    served = serve({
      fetch: async (request) => {
        inFlight++;
        try {
          return await app.handle(routable(request));
        } finally {
          inFlight--;
        }
      },
      hostname: host,
      port: options.port ?? config.server.port,
      idleTimeoutSeconds: resolvedIdleTimeoutSeconds(config),
      maxRequestBodyBytes: config.server.maxBodyBytes + 1_048_576,
    });
  } catch (error) {
    // The HTTP port is taken: the gRPC server must not outlive the failed start.
    await grpc?.stop(0);
    throw error;
  }
  if (config.server.publicUrl === "")
    baseUrl = publicUrl({ ...config, server: { ...config.server, port: served.port } });
  const dialHost = WILDCARD_HOSTS.has(host) ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
  const url = `http://${dialHost}:${served.port}`;
  const grpcDial = grpc === undefined ? undefined : `${dialHost}:${grpc.port}`;
  logger.info({ url, grpc: grpcDial, gatewayId, profiles: [...profiles.keys()] }, "gateway listening");

  let stopping: Promise<void> | undefined;
  const stop = async (): Promise<void> => {
    revocations.stop();
    streams.stop();
    await streamLeases.stop();
    await tail.stop();
    const drainUntil = Date.now() + DRAIN_MS;
    while (inFlight > 0 && Date.now() < drainUntil) await new Promise((resolve) => setTimeout(resolve, 20));
    await served.stop();
    await waiting.stop();
    // Blocking calls have had their answer from waiting.stop(); streams ended with the hub.
    await grpc?.stop(DRAIN_MS);
    await Promise.allSettled([redis.quit(), subscriber.quit()]);
    closeRedis();
    await tracing.flush().catch((error: unknown) => logger.warn({ err: error }, "spans not exported"));
    logger.info({ gatewayId }, "gateway stopped");
  };
  return {
    url,
    port: served.port,
    grpcAddress: grpcDial,
    stats: () => ({ streams: streams.size, streamLeases: streamLeases.size, followedTasks: tail.followedTasks }),
    stop: () => {
      stopping ??= stop();
      return stopping;
    },
  };
}
