// The journal area: Redis keys, Lua scripts and their typed APIs over the task store. Other areas import only this.
export { CapacityLeases } from "./capacity-leases.ts";
export {
  type ClientLimits,
  type ClientRecord,
  ClientRegistry,
  hashApiKey,
  type LimitChange,
  type NewClient,
  type RotatedKey,
} from "./client-registry.ts";
export { contentHash } from "./content-hash.ts";
export { DueTasks, inputTimeoutMessage, type PurgeReport, type TaskLifetimes } from "./due-tasks.ts";
export { readStatus, type StatusReport, type WorkerStatus } from "./installation-status.ts";
export { addressKind, type ParsedIp, parseIp } from "./ip-address.ts";
export { KeySpace, QUEUE_GROUP } from "./keys.ts";
export { LostRuns } from "./lost-runs.ts";
export { PushConfigLimitError, PushConfigs, type StorageBudgets, type StoredPushConfig } from "./push-configs.ts";
export {
  type ClaimedQueue,
  type DueDelivery,
  type OutboxDelivery,
  PushOutbox,
  pushReadyMember,
  queueOf,
  type Settlement,
} from "./push-outbox.ts";
export { RateLimits } from "./rate-limits.ts";
export {
  createRedis,
  isCluster,
  parseClusterNode,
  parseSentinel,
  type RedisConnectionOptions,
  subscribeWhenReady,
} from "./redis-connection.ts";
export { ReplicaAck, type ReplicaAckSettings } from "./replica-ack.ts";
export type {
  Claim,
  ClaimRefusal,
  LedgerSettings,
  NextRun,
  NextRunRequest,
  TransitionInput,
  TransitionResult,
} from "./run-ledger.ts";
export { RunLedger } from "./run-ledger.ts";
export { type QueueEntry, RunQueue, toQueueEntries } from "./run-queue.ts";
export { type RedisLike, type ScriptName, scriptSource } from "./scripts.ts";
export type {
  Accepted,
  AcceptInput,
  ClientDefaults,
  JournalEntry,
  JournalSettings,
  ListPage,
  ListQuery,
  ResumeInput,
  Snapshot,
  TaskHead,
  WaitingLeaseRequest,
} from "./task-journal.ts";
export {
  LIST_FILTER_READS,
  parseJournalEntry,
  storeFailure,
  TaskJournal,
  WaitingFullError,
} from "./task-journal.ts";
export {
  ArtifactList,
  appendArtifact,
  applyArtifact,
  assembleArtifacts,
  decodeTaskFields,
  type StoredTask,
  type TaskRecord,
  type TaskViewOptions,
  toTask,
} from "./task-view.ts";
export { type AddressPolicy, checkUrlForm, isAllowListed, type UrlForm, type UrlRefusal } from "./webhook-url.ts";
export { type WorkerRecord, WorkerRegistry } from "./worker-registry.ts";
