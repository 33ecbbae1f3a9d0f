// The configuration's single source of truth: TypeBox schemas with defaults, units and descriptions, plus the
// values derived from them. Pure data and functions: reads no file and no environment (load.ts does that).
import { type Static, Type } from "@sinclair/typebox";

/** An integer setting (seconds, bytes or a count; the unit is in the key's name). */
const integer = (description: string, defaultValue: number, minimum = 1) =>
  Type.Integer({ minimum, default: defaultValue, description });

const stringList = (description: string) => Type.Array(Type.String({ minLength: 1 }), { default: [], description });

export const ServerSchema = Type.Object(
  {
    host: Type.String({ minLength: 1, default: "0.0.0.0", description: "Interface the HTTP server binds to." }),
    port: Type.Integer({ minimum: 1, maximum: 65535, default: 8080, description: "TCP port of the HTTP server." }),
    publicUrl: Type.String({
      default: "",
      description:
        "Base URL that agent cards advertise, as clients reach it (through any proxy), e.g. https://agents.example.com. " +
        "Empty: derived at runtime as http://localhost:<port> (or http://<host>:<port> when host is not a wildcard).",
    }),
    grpcPort: Type.Integer({
      minimum: 0,
      maximum: 65535,
      default: 0,
      description:
        "TCP port of the gRPC server (A2A's gRPC binding, lf.a2a.v1.A2AService, on the same host). 0: no gRPC server, " +
        "and no gRPC interface in the agent cards.",
    }),
    grpcPublicAddress: Type.String({
      default: "",
      description:
        "host:port that agent cards advertise for gRPC, as clients reach it (through any proxy). Empty: the host of " +
        "publicUrl (or of host) with grpcPort.",
    }),
    blockingWaitSeconds: Type.Integer({
      minimum: 1,
      maximum: 100,
      default: 20,
      description:
        "How long a blocking SendMessage waits for a terminal or interrupted state before it answers HTTP 504 " +
        "(BLOCKING_DEADLINE_EXCEEDED; the task is untouched). Integer 1..100: a larger value is an error, never clamped. " +
        "Must be lower than the read timeout of every proxy in front of the gateway.",
    }),
    maxWaitingRequests: integer("Blocking SendMessage requests that may wait at once, across all gateways.", 4),
    storeTimeoutSeconds: integer(
      "How long a request waits for Redis before it answers HTTP 503 STORE_TIMEOUT (Redis paused or stalled without " +
        "closing the connection). The request may still take effect once Redis answers: retry with the same " +
        "messageId. A blocking SendMessage is bounded by blockingWaitSeconds instead.",
      5,
    ),
    streamMaxSeconds: integer("An SSE stream closes after this long; closing never cancels the task.", 300),
    streamKeepaliveSeconds: Type.Integer({
      minimum: 1,
      maximum: 15,
      default: 15,
      description: "Longest silence on an SSE stream before a comment line is sent (1..15).",
    }),
    streamFrameMaxBytes: integer("Largest single SSE event, in bytes.", 1_048_576),
    streamBufferMaxBytes: integer(
      "Bytes one SSE connection may buffer for a slow client; at least streamFrameMaxBytes.",
      4_194_304,
    ),
    maxStreamsPerTask: integer("Open streams on one task, across all gateways.", 8),
    maxStreamsPerClient: integer("Open streams of one client, across all gateways.", 64),
    maxStreamsPerInstallation: integer("Open streams in the whole installation, across all gateways.", 10_000),
    maxBodyBytes: integer("Largest accepted HTTP request body, in bytes.", 1_048_576),
    maxHistoryBytes: integer(
      "Largest history a task may have, in bytes of its stored messages: a follow-up that would take it past this is " +
        "refused (JSON-RPC -32602, reason TASK_HISTORY_LIMIT_EXCEEDED) and the client starts a new task, whose " +
        "referenceTaskIds may name this one. Each follow-up costs Redis a copy of the history, and every answer that " +
        "returns the task carries it. An agent's own messages are counted, and bounded by worker.maxTaskBytes.",
      8_388_608,
    ),
    maxListBytes: integer(
      "Most bytes of history (and with includeArtifacts, of artifacts) one ListTasks page reads and answers with: the " +
        "page ends before the task that would pass it (it always holds one task) and its nextPageToken goes on from " +
        "there, so that a client with large tasks cannot make one request read hundreds of megabytes.",
      8_388_608,
    ),
    maxJsonDepth: Type.Integer({
      minimum: 8,
      maximum: 256,
      default: 32,
      description:
        "Deepest nesting of objects and arrays a request body may have, the envelope included (8..256); deeper is " +
        "refused before it is parsed (JSON-RPC -32600, HTTP+JSON 400). A message's data and metadata get what the " +
        "envelope leaves (about 5 levels less).",
    }),
    maxPendingAuthentications: integer(
      "Credential lookups in Redis one gateway process runs at once for keys it has not seen within the last second; " +
        "past it a request is refused (HTTP 503, AUTHENTICATION_BUSY) before its body is read, so a flood of made-up " +
        "keys cannot crowd out clients.",
      512,
    ),
    streamBuffersMaxBytes: integer(
      "Bytes all SSE streams of one gateway process may hold unread together; past it the streams holding the most " +
        "are cut first (their tasks go on). At least streamBufferMaxBytes.",
      67_108_864,
    ),
    idleTimeoutSeconds: Type.Integer({
      minimum: 0,
      maximum: 255,
      default: 0,
      description:
        "HTTP connection idle timeout. 0 = derived: max(blockingWaitSeconds, streamKeepaliveSeconds) + 10. " +
        "When set it must exceed both (Bun's default of 10 s would cut them); Bun allows at most 255.",
    }),
    metricsToken: Type.String({
      default: "",
      description:
        "Bearer token that GET /metrics requires (Authorization: Bearer <token>). Empty: /metrics answers anyone " +
        "who reaches the port.",
    }),
    cardSigningKeyEnv: Type.String({
      pattern: "^([A-Za-z_][A-Za-z0-9_]*)?$",
      errorMessage: "must be the name of an environment variable (the key itself never goes in the config)",
      default: "",
      description:
        "NAME of the environment variable holding the PEM private key (EC P-256 for ES256, or Ed25519 for EdDSA) " +
        "that signs every agent card; its public key is served at /.well-known/jwks.json. Empty: cards are unsigned.",
    }),
    cardSigningKeyId: Type.String({
      default: "",
      description:
        "kid of the card signing key (JWS header and JWKS). Empty: derived from the key (RFC 7638 thumbprint).",
    }),
  },
  { additionalProperties: false, default: {}, description: "The HTTP gateway." },
);
export type ServerConfig = Static<typeof ServerSchema>;

export const WorkerSchema = Type.Object(
  {
    livenessSeconds: integer(
      "The gateway accepts tasks only while an actor heartbeat or sweep tick is younger than this (else HTTP 503, " +
        "WORKER_UNAVAILABLE).",
      120,
    ),
    heartbeatSeconds: integer("Interval between actor heartbeats; must be lower than livenessSeconds.", 5),
    leaseSeconds: integer("A run whose lease is not renewed for this long is reclaimed and retried.", 30),
    maxAttempts: integer("Executions of one run, the first included, before it fails with a reason.", 3),
    maxTaskBytes: integer(
      "Largest a task's stored values (history, status, artifacts, metadata and push configs) may grow to by its " +
        "agent's output, in bytes. A run whose artifacts or messages would take the task past this stops: its handler " +
        'is aborted (reason "output") and the task fails with a message saying so, keeping what was stored before. ' +
        "Every answer that returns the task carries it whole, so this bounds what one GetTask or stream makes a " +
        "gateway read. 0 = no limit (the client's storage budget still applies).",
      33_554_432,
      0,
    ),
    actors: integer("Actor processes the supervisor (work) starts.", 2),
    concurrency: integer("Runs one actor executes at once.", 8),
    drainSeconds: integer("On SIGTERM, how long actors may finish their current runs before they are stopped.", 20, 0),
    restartIntensity: integer(
      "Most actor restarts within restartPeriodSeconds; beyond it the supervisor gives up (a crash loop). Only exits " +
        "of actors that were starting or idle count: an actor that dies while a handler runs, or that the watchdog kills " +
        "once it is up, died of a run (bounded by maxAttempts) and is restarted without counting.",
      5,
      0,
    ),
    restartPeriodSeconds: integer("Window over which restartIntensity counts restarts.", 60),
    stallSeconds: integer(
      "An actor pings its supervisor about once a second; one that sent nothing for this long is SIGKILLed (its " +
        "event loop is stuck, e.g. in a handler's synchronous loop) and replaced. At least 2. Its runs are reclaimed " +
        "after their lease; such kills do not count toward restartIntensity.",
      30,
      2,
    ),
    actorMaxMemoryMb: integer(
      "Resident memory (RSS, MiB) above which the supervisor SIGKILLs an actor and replaces it, read about once a " +
        "second. 0 = no limit; else at least 128 (an idle actor holds about 70). Its runs are reclaimed after their " +
        "lease; such kills do not count toward restartIntensity.",
      2048,
      0,
    ),
    reclaimIntervalSeconds: integer("How often expired run leases are looked for and reclaimed.", 5),
    sweepBatch: integer("Most items (queued runs, expired leases, retention) one sweep tick handles.", 100),
    metricsPort: Type.Integer({
      minimum: 0,
      maximum: 65535,
      default: 9464,
      description: "Port where the supervisor (work, start) serves its actors' aggregated GET /metrics; 0 = off.",
    }),
    metricsHost: Type.String({
      minLength: 1,
      default: "127.0.0.1",
      description: "Interface the supervisor's metrics server binds to.",
    }),
  },
  { additionalProperties: false, default: {}, description: "Actors, the supervisor and sweep." },
);
export type WorkerConfig = Static<typeof WorkerSchema>;

/** host:port, an IPv6 address in brackets. */
const HOST_PORT = "^(\\[[0-9A-Fa-f:.]+\\]|[^\\s:\\[\\]]+):[0-9]{1,5}$";
const HOST_PORT_MESSAGE = "must be host:port (an IPv6 address in brackets: [::1]:7000)";

export const RedisSchema = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      default: "redis://127.0.0.1:6379",
      description:
        "Redis URL: redis:// or rediss://, or unix:///path/to/redis.sock for a Redis on the same host (credentials " +
        "as unix://user:password@localhost/path, the database as ?db=N). REDIS_URL is honoured too; A2A_REDIS_URL " +
        "wins over it.",
    }),
    keyPrefix: Type.String({
      pattern: ":$",
      errorMessage: 'must end with ":"',
      default: "a2a:",
      description: 'Prefix of every key this installation writes; must end with ":".',
    }),
    shards: Type.Integer({
      minimum: 1,
      maximum: 1024,
      default: 1,
      description: "Hash-tag shards that queues and indices are spread over, for Redis Cluster (1..1024).",
    }),
    cluster: Type.Array(Type.String({ pattern: HOST_PORT, errorMessage: HOST_PORT_MESSAGE }), {
      default: [],
      description:
        "Seed nodes of a Redis Cluster as host:port (a few are enough; the rest are discovered). Empty: one Redis " +
        "at redis.url. When set, redis.url gives only the username, password and TLS (rediss://) of every node; " +
        "set redis.shards to several times the number of masters so the run queues spread over them. " +
        "Comma-separated in env.",
    }),
    sentinels: Type.Array(
      Type.Union([
        Type.String({ pattern: HOST_PORT, errorMessage: HOST_PORT_MESSAGE }),
        Type.Object(
          { host: Type.String({ minLength: 1 }), port: Type.Integer({ minimum: 1, maximum: 65535 }) },
          { additionalProperties: false },
        ),
      ]),
      {
        default: [],
        description:
          "Redis Sentinels as {host, port} objects or host:port strings (comma-separated in env). When set, the " +
          "client asks them which server is the primary of redis.sentinelName and follows every failover; " +
          "redis.url then gives only the username, password, TLS and database of the data servers. Not with " +
          "redis.cluster.",
      },
    ),
    sentinelName: Type.String({
      minLength: 1,
      default: "mymaster",
      description: "The primary's name as the Sentinels know it (sentinel monitor <name> ...).",
    }),
    sentinelPassword: Type.String({
      default: "",
      description: "Password of the Sentinels themselves (requirepass in sentinel.conf). Empty: none.",
    }),
    ackReplicas: Type.Integer({
      minimum: 0,
      maximum: 16,
      default: 0,
      description:
        "Replicas that must confirm a write (WAIT) before a client is told it happened: accept and resume " +
        "(SendMessage, SendStreamingMessage), CancelTask, push config create and delete. 0 = answer once the " +
        "primary has it (a primary that dies before its replica copied the write loses it). When fewer confirm " +
        "within ackTimeoutMs: HTTP 503 STORE_NOT_REPLICATED with Retry-After and the task id; the write stays on " +
        "the primary, and a retry with the same messageId returns the same task.",
    }),
    ackTimeoutMs: Type.Integer({
      minimum: 1,
      maximum: 60_000,
      default: 1000,
      description:
        "How long a write waits for redis.ackReplicas confirmations, in ms (1..60000). The gateway's Redis " +
        "connection waits with it: keep it well below server.storeTimeoutSeconds.",
    }),
    dedupSeconds: integer("How long a client's messageId is remembered, so a repeat returns the same task.", 86_400),
  },
  { additionalProperties: false, default: {}, description: "Where all state lives." },
);
export type RedisConfig = Static<typeof RedisSchema>;

export const PushSchema = Type.Object(
  {
    enabled: Type.Boolean({ default: true, description: "Whether push notifications are offered and delivered." }),
    maxConfigsPerTask: integer("Push notification configs one task may hold.", 10),
    allowHosts: stringList(
      "Webhook receivers exempt from the https-only rule and the private-address checks: host (on the URL scheme's " +
        "default port only: 80 for http, 443 for https), host:port (that port only) or host:* (any port), and " +
        "*.suffix for any name under suffix with the same port forms; an IPv6 address in brackets ([::1]:8080). " +
        "Comma-separated in env.",
    ),
    timeoutSeconds: integer("Timeout of one webhook delivery attempt.", 10),
    maxAttempts: integer("Delivery attempts of one notification before it is given up.", 8),
    retryBaseMs: integer(
      "Ceiling of the delay before the first retry, in milliseconds; it doubles with each attempt, up to 5 minutes " +
        "(the delay is random below it). A receiver's Retry-After on a 429 or 503 overrides it.",
      1000,
    ),
    signingSecrets: stringList(
      "Webhook signing secrets (whsec_<base64> or plain); each one signs every request, for rotation. Comma-separated in env.",
    ),
  },
  { additionalProperties: false, default: {}, description: "Webhooks, sent by workers only." },
);
export type PushConfig = Static<typeof PushSchema>;

export const ClientsSchema = Type.Object(
  {
    maxStoredBytes: integer(
      "Bytes one client's tasks may hold in Redis (messages, metadata, push configs, artifacts, journal entries, " +
        "webhook notifications waiting for their receivers, and 1 KiB per task for its keys and bookkeeping), counted " +
        "by the scripts that write them and given back when a finished task is deleted after its retention. A " +
        "message or push config that would pass it is refused (HTTP 503, CLIENT_STORAGE_LIMIT_EXCEEDED) and nothing " +
        "is stored; actors' output is counted but never refused, so the next message is. 0 = no limit. A client record's own value (clients limit --max-stored-bytes) wins.",
      268_435_456,
      0,
    ),
    maxInterruptedTasks: integer(
      "Tasks of one client that may wait in INPUT_REQUIRED or AUTH_REQUIRED at once; past it new tasks are refused " +
        "(HTTP 503, INTERRUPTED_TASKS_LIMIT_EXCEEDED) until one is answered, canceled or expires (a profile's " +
        "inputTimeoutSeconds). 0 = no limit. A client record's own value wins.",
      1000,
      0,
    ),
    maxRunningTasks: integer(
      "Runs of one client that actors execute at once, across the installation; its other queued runs are deferred " +
        "(no attempt counted) until one of its runs ends, so one client cannot take every worker slot. Set it to " +
        "about half the fleet's slots (actors x concurrency x hosts). 0 = no limit. A client record's own value wins.",
      8,
      0,
    ),
    maxWaitingRequests: integer(
      "Blocking SendMessage requests one client may have waiting at once, across all gateways; past it HTTP 503 " +
        "(CLIENT_WAITING_REQUESTS_LIMIT_EXCEEDED). 0 = half of server.maxWaitingRequests, rounded up.",
      0,
      0,
    ),
    requestsPerSecond: integer(
      "Requests per second one client may make, across all gateways (a token bucket in Redis); past it HTTP 429 " +
        "(RATE_LIMIT_EXCEEDED) with Retry-After. 0 = no rate limit. A client record's own value wins.",
      0,
      0,
    ),
    requestBurst: integer(
      "Requests a client may make at once above its rate (the token bucket's size). 0 = twice requestsPerSecond.",
      0,
      0,
    ),
  },
  {
    additionalProperties: false,
    default: {},
    description: "Per-client bounds, so that no client can degrade another; each holds across every gateway.",
  },
);
export type ClientsConfig = Static<typeof ClientsSchema>;

export const LogLevelSchema = Type.Union(
  [
    Type.Literal("trace"),
    Type.Literal("debug"),
    Type.Literal("info"),
    Type.Literal("warn"),
    Type.Literal("error"),
    Type.Literal("fatal"),
    Type.Literal("silent"),
  ],
  { default: "info", description: "Least severe level that is logged: trace|debug|info|warn|error|fatal|silent." },
);
export type LogLevel = Static<typeof LogLevelSchema>;

export const LogSchema = Type.Object(
  { level: LogLevelSchema },
  { additionalProperties: false, default: {}, description: "Logging." },
);
export type LogConfig = Static<typeof LogSchema>;

export const TracingSchema = Type.Object(
  {
    enabled: Type.Boolean({
      default: false,
      description:
        "Export OpenTelemetry traces over OTLP/HTTP (gateway, actors, sweep). Off: no tracer provider is registered " +
        "and every span is the API's no-op.",
    }),
    endpoint: Type.String({
      default: "",
      description:
        "OTLP/HTTP traces URL, e.g. http://127.0.0.1:4318/v1/traces. Empty: the exporter's own choice: " +
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces, else " +
        "http://localhost:4318/v1/traces.",
    }),
    samplingRatio: Type.Number({
      minimum: 0,
      maximum: 1,
      default: 1,
      description:
        "Share of new traces recorded, 0..1. A request that carries a traceparent follows its sampled flag, and a " +
        "worker's spans follow the request's.",
    }),
    serviceName: Type.String({
      minLength: 1,
      default: "a2a-runtime",
      description: "service.name of every span (also read from OTEL_SERVICE_NAME).",
    }),
  },
  { additionalProperties: false, default: {}, description: "OpenTelemetry traces (see docs/tracing.md)." },
);
export type TracingConfig = Static<typeof TracingSchema>;

const envVarName = (description: string) =>
  Type.String({
    pattern: "^[A-Za-z_][A-Za-z0-9_]*$",
    errorMessage: "must be the name of an environment variable (the key itself never goes in the config)",
    description,
  });

const skillSchema = (description: string) =>
  Type.Object(
    {
      id: Type.String({ minLength: 1, description: "Skill id in the agent card." }),
      name: Type.String({ minLength: 1, description: "Human-readable skill name." }),
      description: Type.String({ minLength: 1, description: "What the skill does, for clients choosing one." }),
      tags: Type.Array(Type.String(), { default: [], description: "Keywords for the skill." }),
      examples: Type.Optional(Type.Array(Type.String(), { description: "Example prompts." })),
    },
    { additionalProperties: false, description },
  );

export const SkillSchema = skillSchema("The one skill this profile publishes in its agent card.");
export type Skill = Static<typeof SkillSchema>;

export const ExtendedCardSchema = Type.Object(
  {
    description: Type.Optional(
      Type.String({
        minLength: 1,
        description: "The agent's description in the extended card, instead of the profile's.",
      }),
    ),
    skills: Type.Array(skillSchema("A skill the extended card lists after the profile's own."), {
      default: [],
      description: "Skills only authenticated clients see, listed after the profile's skill (ids unique in the card).",
    }),
  },
  {
    additionalProperties: false,
    description:
      "The extended agent card: the public card (capabilities.extendedAgentCard then true) with this description and " +
      "these skills, served by GetExtendedAgentCard to authenticated clients that may use the profile, signed like " +
      "the public card. Keeps from anonymous readers of the public card what only clients should see.",
  },
);
export type ExtendedCard = Static<typeof ExtendedCardSchema>;

export const LlmSchema = Type.Object(
  {
    baseUrl: Type.String({ minLength: 1, description: "OpenAI-compatible API base URL (http or https)." }),
    model: Type.String({ minLength: 1, description: "Model name sent to the API." }),
    apiKeyEnv: Type.Optional(envVarName("NAME of the environment variable that holds the API key.")),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2, description: "Sampling temperature (0..2)." })),
    maxSteps: integer("Most model calls (agent loop steps) in one run.", 8),
  },
  { additionalProperties: false, description: "The LLM the handler may call." },
);
export type LlmConfig = Static<typeof LlmSchema>;

export const ModerationSchema = Type.Object(
  {
    baseUrl: Type.String({ minLength: 1, description: "Moderation API base URL (http or https)." }),
    model: Type.Optional(Type.String({ minLength: 1, description: "Moderation model name." })),
    apiKeyEnv: Type.Optional(envVarName("NAME of the environment variable that holds the moderation API key.")),
    timeoutMs: integer("Timeout of one moderation call, in milliseconds.", 5000),
  },
  { additionalProperties: false, description: "Output moderation by an external API." },
);
export type ModerationConfig = Static<typeof ModerationSchema>;

export const GuardrailsSchema = Type.Object(
  {
    denyPatterns: stringList(
      'Output that matches one of these is refused. "/body/flags" is a regular expression (e.g. "/secret\\d+/i"; ' +
        "flags g and y are not allowed); anything else is literal text. Write a literal that looks like /x/ as a regex.",
    ),
    personalData: Type.Boolean({ default: false, description: "Refuse output that contains personal data." }),
    maxLength: integer(
      "Longest allowed output, in characters; 0 = no limit. Text past it is refused as the handler emits it (the run " +
        "fails then, and with fullTextCheck off none of it is streamed).",
      0,
      0,
    ),
    moderation: Type.Optional(ModerationSchema),
    timeoutMs: integer("Time budget of the whole output check, in milliseconds.", 10_000),
  },
  { additionalProperties: false, default: {}, description: "Output guardrails." },
);
export type GuardrailsConfig = Static<typeof GuardrailsSchema>;

export const FullTextCheckSchema = Type.Union([Type.Literal("auto"), Type.Literal("required"), Type.Literal("off")], {
  default: "auto",
  description:
    "Hold all content back until the whole text passed the output check: required, off, or auto (= required " +
    "whenever an output guardrail or an outputSchema is configured).",
});
export type FullTextCheck = Static<typeof FullTextCheckSchema>;

const jsonSchema = (description: string) => Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description }));

export const ProfileSchema = Type.Object(
  {
    name: Type.String({
      pattern: "^[a-z0-9][a-z0-9-]{0,62}$",
      description: "Unique profile name: lower-case letters, digits and '-', at most 63 characters.",
    }),
    description: Type.String({ minLength: 1, description: "What this agent does (agent card)." }),
    handler: Type.String({ minLength: 1, description: "Name of a registered domain handler, e.g. echo." }),
    skill: SkillSchema,
    extendedCard: Type.Optional(ExtendedCardSchema),
    inputModes: Type.Array(Type.String({ minLength: 1 }), {
      minItems: 1,
      default: ["text/plain"],
      description: "Media types the profile accepts.",
    }),
    outputModes: Type.Array(Type.String({ minLength: 1 }), {
      minItems: 1,
      default: ["text/plain"],
      description: "Media types the profile produces.",
    }),
    llm: Type.Optional(LlmSchema),
    tools: stringList("Tools the handler may call (allow-list)."),
    resources: stringList("Resources the handler may use (allow-list)."),
    identity: Type.String({
      default: "",
      description: "Execution identity the runs act as; empty = the profile name.",
    }),
    workspace: Type.Optional(Type.String({ minLength: 1, description: "Pinned workspace path for the run." })),
    inputSchema: jsonSchema("JSON Schema the input data must satisfy."),
    outputSchema: jsonSchema("JSON Schema the output data must satisfy (checked before content leaves)."),
    quota: Type.Object(
      {
        maxActiveTasks: integer("Queued + running tasks of this profile across all clients; 0 = unlimited.", 0, 0),
        maxStoredBytes: integer(
          "Bytes the tasks of this profile may hold in Redis, across all clients (counted like " +
            "clients.maxStoredBytes; with redis.shards > 1 the limit applies in each shard); past it HTTP 503 " +
            "PROFILE_STORAGE_LIMIT_EXCEEDED. 0 = unlimited.",
          0,
          0,
        ),
      },
      { additionalProperties: false, default: {}, description: "Limits of this profile." },
    ),
    runTimeoutSeconds: integer(
      "Time limit of one leg of a run, from its claim until the handler settles (a leg resumed after INPUT_REQUIRED " +
        "or AUTH_REQUIRED has its own). Past it the handler's signal is aborted (reason timeout) and the task ends " +
        "FAILED without a retry; a handler that ignores the signal is not waited for.",
      600,
    ),
    inputTimeoutSeconds: integer(
      "How long a task may wait in INPUT_REQUIRED or AUTH_REQUIRED for the client's next message; past it the " +
        "workers' retention pass ends it FAILED with a status message saying so (journal entry and webhook as for any " +
        "transition; its run ends, it no longer counts toward clients.maxInterruptedTasks, its retention starts).",
      86_400,
    ),
    retentionSeconds: integer(
      "How long a finished task is kept; then the workers' retention pass deletes it and gives its stored bytes back.",
      86_400,
    ),
    journalRetentionSeconds: integer(
      "How long a finished task's journal stream is kept. Streams need it only until they have read the last event " +
        "(webhooks have their own outbox; blocking waits and GetTask read the task), and a stream costs about 4.7 KB of " +
        "Redis memory, so by default (0) the terminal step deletes it, unless a stream follows the task: then it is kept " +
        "60 s for that stream.",
      0,
      0,
    ),
    artifactWriteIntervalMs: Type.Integer({
      minimum: 0,
      maximum: 5000,
      default: 0,
      description:
        "Least time, in ms, between two writes of a run's streamed output (artifact updates) to Redis (0..5000). The " +
        "deltas that arrive meanwhile go in the next write as one update, so that text arriving at a model's pace " +
        "costs one write per interval instead of one per delta (each write costs about 1.2 KiB sent to Redis and 17 " +
        "commands), at the price of that much latency on the wire. A status change (a progress note, the run's end) " +
        "is never held: it goes at once with what waits. 0: a write leaves as soon as the previous one landed.",
    }),
    fullTextCheck: FullTextCheckSchema,
    guardrails: GuardrailsSchema,
    streaming: Type.Boolean({ default: true, description: "Offer streaming (agent card capability)." }),
    pushNotifications: Type.Boolean({
      default: true,
      description: "Offer push notifications (agent card capability).",
    }),
  },
  { additionalProperties: false, description: "A publication profile: one skill bound to a handler." },
);
export type Profile = Static<typeof ProfileSchema>;

export const ConfigSchema = Type.Object(
  {
    server: ServerSchema,
    worker: WorkerSchema,
    redis: RedisSchema,
    clients: ClientsSchema,
    push: PushSchema,
    log: LogSchema,
    tracing: TracingSchema,
    handlers: Type.Array(Type.String({ minLength: 1 }), {
      default: [],
      description:
        "Handler modules that workers (work, start, sweep) load besides the built-ins: a path (in the file, relative " +
        "to the file; in the environment, to the working directory) or a package name. Each registers the " +
        "defineHandler() values it exports; --handlers adds more. Comma-separated in env.",
    }),
    profiles: Type.Array(ProfileSchema, {
      minItems: 1,
      default: [
        {
          name: "echo",
          handler: "echo",
          description: "Echoes the text it receives.",
          skill: { id: "echo", name: "Echo", description: "Answers with the text it got.", tags: ["test"] },
        },
      ],
      description: "Publication profiles; names are unique. Set only in the config file.",
    }),
  },
  { additionalProperties: false, description: "a2a-runtime configuration." },
);
export type Config = Static<typeof ConfigSchema>;

/** One environment variable that sets a config key; rows for the docs generator. */
export const ConfigEnvironmentVariableSchema = Type.Object({
  path: Type.String({ description: "Dotted config path, e.g. server.port." }),
  env: Type.String({ description: "Environment variable name, e.g. A2A_SERVER_PORT." }),
  description: Type.String({ description: "The config key's description." }),
  default: Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Array(Type.String())], {
    description: "The config key's default.",
  }),
});
export type ConfigEnvironmentVariable = Static<typeof ConfigEnvironmentVariableSchema>;

/** Seconds the HTTP server lets a connection idle: the explicit value, or max(blocking wait, keep-alive) + 10. */
export function resolvedIdleTimeoutSeconds(config: Config): number {
  const { idleTimeoutSeconds, blockingWaitSeconds, streamKeepaliveSeconds } = config.server;
  return idleTimeoutSeconds > 0 ? idleTimeoutSeconds : Math.max(blockingWaitSeconds, streamKeepaliveSeconds) + 10;
}

/** Bind addresses that a client cannot dial as such; the derived URL names localhost instead. */
const WILDCARD_HOSTS = new Set(["0.0.0.0", "::", "[::]"]);

/** The base URL agent cards advertise, without a trailing slash: server.publicUrl, or derived from host and port. */
export function publicUrl(config: Config): string {
  const { publicUrl: configured, host, port } = config.server;
  if (configured !== "") return configured.replace(/\/+$/, "");
  const shown = WILDCARD_HOSTS.has(host) ? "localhost" : host.includes(":") ? `[${host}]` : host;
  return `http://${shown}:${port}`;
}

/**
 * The host:port agent cards advertise for gRPC (server.grpcPublicAddress, or publicUrl's host with `port`, the gRPC
 * port actually bound), or undefined when no gRPC server runs.
 */
export function grpcPublicAddress(config: Config, port: number | undefined): string | undefined {
  if (port === undefined) return undefined;
  const { grpcPublicAddress: configured } = config.server;
  if (configured !== "") return configured;
  return `${new URL(publicUrl(config)).hostname}:${port}`;
}

/** Blocking requests one client may have waiting at once: clients.maxWaitingRequests, or half the installation's. */
export function clientWaitingShare(config: Config): number {
  const { maxWaitingRequests } = config.clients;
  return maxWaitingRequests > 0 ? maxWaitingRequests : Math.ceil(config.server.maxWaitingRequests / 2);
}

/** The token bucket's size for a rate (requests per second): clients.requestBurst, or twice the rate. */
export function clientRequestBurst(config: Config, requestsPerSecond: number): number {
  const { requestBurst } = config.clients;
  return requestBurst > 0 ? requestBurst : Math.max(1, requestsPerSecond * 2);
}

/** The execution identity a profile's runs act as: its identity, or its name when that is empty. */
export function profileIdentity(profile: Profile): string {
  return profile.identity !== "" ? profile.identity : profile.name;
}

/**
 * Whether no content of this profile may leave before the whole text passed the output check.
 * "auto" means: when any output guardrail (deny patterns, personal data, max length, moderation) or an output schema
 * is configured.
 */
export function requiresFullTextCheck(profile: Profile): boolean {
  if (profile.fullTextCheck !== "auto") return profile.fullTextCheck === "required";
  const { denyPatterns, personalData, maxLength, moderation } = profile.guardrails;
  return (
    denyPatterns.length > 0 ||
    personalData ||
    maxLength > 0 ||
    moderation !== undefined ||
    profile.outputSchema !== undefined
  );
}

/**
 * The regular expression a deny pattern stands for, or undefined when it is literal text.
 * A pattern of the form "/body/flags" is a regular expression; throws SyntaxError when it does not compile or uses
 * the stateful flags g or y (they would make repeated tests disagree).
 */
export function denyPatternRegExp(pattern: string): RegExp | undefined {
  const match = /^\/(.+)\/([a-z]*)$/s.exec(pattern);
  if (match === null) return undefined;
  const [, body = "", flags = ""] = match;
  if (/[gy]/.test(flags)) throw new SyntaxError(`flags g and y are not allowed (got "${flags}")`);
  return new RegExp(body, flags);
}
