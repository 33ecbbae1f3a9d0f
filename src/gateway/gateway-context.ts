// What every request handler of one gateway process shares: configuration, the two Redis connections' users (journal,
// tail, leases, streams, authenticator), the profiles with their compiled input checkers, and the cards.
import { type Config, compileJsonSchema, type Profile, type SchemaCheck } from "../config/index.ts";
import type { KeySpace, RateLimits, RedisLike, TaskJournal } from "../journal/index.ts";
import type { Logger } from "../log.ts";
import type { AgentCards } from "./agent-card.ts";
import type { Authenticator } from "./authenticator.ts";
import type { JournalTail } from "./journal-tail.ts";
import type { GatewayMetrics } from "./metrics.ts";
import type { StreamHub } from "./stream-hub.ts";
import type { StreamLeases } from "./stream-leases.ts";
import type { WaitingLeases } from "./waiting-leases.ts";

export interface ProfileRuntime {
  readonly profile: Profile;
  /** Checks each data part of an incoming message; undefined when the profile has no inputSchema. */
  readonly inputChecker: SchemaCheck | undefined;
}

export interface GatewayContext {
  readonly config: Config;
  readonly keys: KeySpace;
  /** The shared command connection. */
  readonly redis: RedisLike;
  readonly journal: TaskJournal;
  readonly tail: JournalTail;
  readonly waiting: WaitingLeases;
  /** Every open SSE stream of this process, with the one timer for keep-alives, durations and slow clients. */
  readonly streams: StreamHub;
  /** The stream limits' leases held by this process. */
  readonly streamLeases: StreamLeases;
  readonly auth: Authenticator;
  /** Every client's request-rate bucket (clients.requestsPerSecond), shared by all gateways. */
  readonly rateLimits: RateLimits;
  readonly profiles: ReadonlyMap<string, ProfileRuntime>;
  readonly cards: AgentCards;
  readonly logger: Logger;
  /** This process's Prometheus metrics (GET /metrics). */
  readonly metrics: GatewayMetrics;
  /** Retry-After, in seconds, of every refusal over capacity. */
  readonly retryAfterSeconds: number;
  /** A fresh id for one request (unique within this process). */
  nextRequestId(): string;
}

/** Prepares every profile once (the config loader has already refused an inputSchema that does not compile). */
export function profileRuntimes(config: Config): Map<string, ProfileRuntime> {
  const runtimes = new Map<string, ProfileRuntime>();
  for (const profile of config.profiles) {
    const inputChecker = profile.inputSchema === undefined ? undefined : compileJsonSchema(profile.inputSchema);
    runtimes.set(profile.name, { profile, inputChecker });
  }
  return runtimes;
}
