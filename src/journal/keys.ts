// The Redis key layout, in one place (documented for operators in docs/redis-keys.md).
// A client's tasks live in one shard; every key of a shard carries the shard's hash tag, so each script runs in one slot.
import { TASK_STATES, type TaskState } from "../protocol/index.ts";

/** FNV-1a over UTF-16 code units: stable across runtimes and cheap; used only to spread clients over shards. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** Names every key of an installation. `prefix` ends with ":"; `shards` ≥ 1. */
export class KeySpace {
  constructor(
    readonly prefix: string,
    readonly shards: number = 1,
  ) {}

  /** The shard that holds a client's tasks, queue entries and dedup records. */
  shardOf(clientId: string): number {
    return this.shards === 1 ? 0 : fnv1a(clientId) % this.shards;
  }

  /** The hash-tagged stem of a shard's keys, e.g. `a2a:{0}:`. */
  shard(shard: number): string {
    return `${this.prefix}{${shard}}:`;
  }

  /** HASH: the task view (state, revision, status, history, artifacts, owner, profile, run). */
  task(shard: number, taskId: string): string {
    return `${this.shard(shard)}task:${taskId}`;
  }
  /**
   * HASH: the run of a task, addressed by the task id since one task has one run (fields: id, task, client, state,
   * fence, tries, owner, lease, entry, cancel).
   */
  run(shard: number, taskId: string): string {
    return `${this.shard(shard)}run:${taskId}`;
  }
  /** STREAM: the task journal, one entry per revision after the first (`rev`, `ev` = StreamResponse JSON). */
  journal(shard: number, taskId: string): string {
    return `${this.shard(shard)}journal:${taskId}`;
  }
  /**
   * STRING: the task's artifact events since its artifact list was last compacted, each `,` + StreamResponse JSON
   * (`{"artifactUpdate":…}`), in journal order. A streamed delta appends here in O(delta); readers apply these events
   * to the task's `arts` list; the run's end (terminal or interrupted) folds them into `arts` and deletes this key.
   */
  artifactChunks(shard: number, taskId: string): string {
    return `${this.shard(shard)}chunks:${taskId}`;
  }
  /** HASH: a task's push notification configs, config id → TaskPushNotificationConfig JSON (with credentials). */
  pushConfigs(shard: number, taskId: string): string {
    return `${this.shard(shard)}push:${taskId}`;
  }
  /**
   * HASH: a task's pending webhook deliveries, one queue per config in journal order: `n:<cfg>` queued and `d:<cfg>`
   * settled since the queue was last empty, `<i>:<cfg>` the i-th delivery (JSON: id, cfg, rev, attempts, ev).
   */
  pushOutbox(shard: number, taskId: string): string {
    return `${this.shard(shard)}outbox:${taskId}`;
  }
  /**
   * LIST: a task's pending deliveries as a version before the queues per config kept them (all configs in one queue),
   * due as the bare task id in `pushReady`: a delivery worker moves them into the task's outbox; purge deletes it.
   */
  legacyPushQueue(shard: number, taskId: string): string {
    return `${this.shard(shard)}pushq:${taskId}`;
  }
  /**
   * ZSET: the webhook queues with pending deliveries, as `pushReadyMember`, scored by when the next attempt is due
   * (ms); a claim pushes it ahead.
   */
  pushReady(shard: number): string {
    return `${this.shard(shard)}pushready`;
  }
  /** STREAM: deliveries given up or refused (`task`, `cfg`, `rev`, `id`, `reason`). */
  pushDead(shard: number): string {
    return `${this.shard(shard)}pushdead`;
  }
  /**
   * STRING: `<content hash>:<taskId>` for a messageId a client sent to one profile, with a TTL. The same messageId sent
   * to another profile is another message (profile names hold no ':').
   */
  dedup(shard: number, clientId: string, profile: string, messageId: string): string {
    return `${this.shard(shard)}dedup:${clientId}:${profile}:${messageId}`;
  }
  /**
   * HASH: a client record (name, profiles, limit, revoked, created, keyhash; and, when set, its own maxbytes, maxint,
   * maxrun and rps, which win over the configured defaults).
   */
  client(shard: number, clientId: string): string {
    return `${this.shard(shard)}client:${clientId}`;
  }
  /** ZSET: a client's task ids in one profile scored by status timestamp (ms): ListTasks pages through it. */
  clientTasks(shard: number, clientId: string, profile: string): string {
    return `${this.shard(shard)}client:${clientId}:tasks:${profile}`;
  }
  /**
   * ZSET: a client's task ids in one profile and state, scored by status timestamp (ms), for ListTasks by status. The
   * scripts derive it from the client index's key (lua/include/task-index.lua): keep the two in step.
   */
  stateTasks(shard: number, clientId: string, profile: string, state: TaskState): string {
    return `${this.clientTasks(shard, clientId, profile)}:${state}`;
  }
  /** The client's state indexes in one profile, one per task state (TASK_STATES' order). */
  stateTaskIndexes(shard: number, clientId: string, profile: string): string[] {
    return TASK_STATES.map((state) => this.stateTasks(shard, clientId, profile, state));
  }
  /** ZSET: a client's task ids in one profile and context, scored by status timestamp (ms), for ListTasks by context. */
  contextTasks(shard: number, clientId: string, profile: string, contextId: string): string {
    return `${this.shard(shard)}client:${clientId}:ctx:${profile}:${contextId}`;
  }
  /** SET: a client's queued and running task ids (its limit counts these). */
  clientActive(shard: number, clientId: string): string {
    return `${this.shard(shard)}client:${clientId}:active`;
  }
  /** SET: a client's task ids in INPUT_REQUIRED or AUTH_REQUIRED (clients.maxInterruptedTasks counts these). */
  clientInterrupted(shard: number, clientId: string): string {
    return `${this.shard(shard)}client:${clientId}:interrupted`;
  }
  /** SET: a client's task ids whose runs actors execute now, across the installation (maxRunningTasks counts these). */
  clientRunning(shard: number, clientId: string): string {
    return `${this.shard(shard)}client:${clientId}:running`;
  }
  /** ZSET: a client's runs deferred at its running-run limit (task id → first deferral, ms), oldest queued first. */
  clientDeferred(shard: number, clientId: string): string {
    return `${this.shard(shard)}client:${clientId}:deferred`;
  }
  /** SET: the clients of a shard that have deferred runs (the retention pass looks at these). */
  deferredClients(shard: number): string {
    return `${this.shard(shard)}deferred`;
  }
  /**
   * HASH: the stored bytes of a shard's clients and profiles, fields `client:<id>` and `profile:<name>`; each is the sum
   * of its tasks' `bytes`, `jbytes` and `obytes` fields. A field at 0 is deleted.
   */
  bytes(shard: number): string {
    return `${this.shard(shard)}bytes`;
  }
  /** ZSET: interrupted task ids scored by when their input timeout passes (ms); the retention pass fails them. */
  inputDue(shard: number): string {
    return `${this.shard(shard)}inputdue`;
  }
  /** ZSET: finished task ids scored by their next deletion step (ms): the journal's, then the task's. */
  purge(shard: number): string {
    return `${this.shard(shard)}purge`;
  }
  /** SET: a profile's queued and running task ids in a shard (its quota counts these). */
  profileActive(shard: number, profile: string): string {
    return `${this.shard(shard)}profile:${profile}:active`;
  }
  /** STRING: Redis time (seconds) of the last worker heartbeat or sweep tick seen by this shard. */
  live(shard: number): string {
    return `${this.shard(shard)}live`;
  }
  /** STREAM with consumer group `actors`: queued runs (`run`, `task`, `client`). */
  queue(shard: number): string {
    return `${this.shard(shard)}queue`;
  }
  /** STREAM: runs that exhausted their attempts (`run`, `task`, `reason`). */
  dead(shard: number): string {
    return `${this.shard(shard)}dead`;
  }
  /** ZSET: leases of the SSE streams open on a task, scored by expiry (ms), across every gateway. */
  taskStreams(shard: number, taskId: string): string {
    return `${this.shard(shard)}streams:task:${taskId}`;
  }
  /** HASH with TTL: a client's request-rate token bucket (t = tokens, ms = last take), shared by every gateway. */
  clientRate(shard: number, clientId: string): string {
    return `${this.shard(shard)}rate:client:${clientId}`;
  }
  /** ZSET: leases of a client's waiting blocking requests, scored by expiry (ms), across every gateway. */
  clientWaiting(shard: number, clientId: string): string {
    return `${this.shard(shard)}waiting:client:${clientId}`;
  }
  /** ZSET: leases of a client's open SSE streams, scored by expiry (ms), across every gateway. */
  clientStreams(shard: number, clientId: string): string {
    return `${this.shard(shard)}streams:client:${clientId}`;
  }

  /** STRING: client id for the SHA-256 of an API key. */
  apiKey(keyHash: string): string {
    return `${this.prefix}apikey:${keyHash}`;
  }
  /** SET: every client id. */
  clients(): string {
    return `${this.prefix}clients`;
  }
  /** HASH with TTL: one worker's heartbeat (mode, pid, host, started, beat, inflight, done, version). */
  worker(workerId: string): string {
    return `${this.prefix}worker:${workerId}`;
  }
  /** ZSET: worker ids scored by their last beat (ms). */
  workers(): string {
    return `${this.prefix}workers`;
  }
  /** ZSET: leases of waiting blocking requests, scored by expiry (ms), across every gateway. */
  waiting(): string {
    return `${this.prefix}waiting`;
  }
  /** ZSET: leases of every open SSE stream of the installation, scored by expiry (ms). */
  streams(): string {
    return `${this.prefix}streams`;
  }
  /** Pub/sub channel: `<taskId> <new state>` after every journal append, so gateways re-read what they follow. */
  eventsChannel(): string {
    return `${this.prefix}events`;
  }
  /** Pub/sub channel: `<clientId>` when a client is revoked, so gateways close its open streams at once. */
  revokedChannel(): string {
    return `${this.prefix}revoked`;
  }
  /** Pub/sub channel: `<runId>` when a running run is asked to cancel. */
  cancelChannel(): string {
    return `${this.prefix}cancel`;
  }
}

/** The consumer group every actor reads the run queues with. */
export const QUEUE_GROUP = "actors";
