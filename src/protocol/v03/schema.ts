// The A2A 0.3 JSON-RPC shapes (the v0.3.0 JSON schema): the params a 0.3 client sends and the objects it reads back,
// with their `kind` discriminators and lowercase states. Only the 0.3 binding uses them; nothing 0.3 is ever stored.
import { type Static, Type } from "@sinclair/typebox";
import { MAX_ID_LENGTH, MAX_LIST_ITEMS, MAX_NAME_LENGTH, MAX_PARTS, MAX_URI_LENGTH } from "../limits.ts";
import { Base64Schema, MetadataSchema } from "../schema/message.ts";

/** The version a card names at its top level for 0.3 clients (0.3 cards carry one protocolVersion). */
export const V03_CARD_PROTOCOL_VERSION = "0.3.0";

/**
 * The metadata flag of a data part whose value is not an object: 0.3 data must be one, so the value travels as
 * `{ value }` with this flag set (the convention of the official SDK's 0.3 layer), and is unwrapped when read back.
 */
export const DATA_PART_WRAPPED = "data_part_compat";

const Optional = Type.Optional;
const Id = Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH });
const Name = Type.String({ maxLength: MAX_NAME_LENGTH });

export const V03TaskStateSchema = Type.Union([
  Type.Literal("submitted"),
  Type.Literal("working"),
  Type.Literal("input-required"),
  Type.Literal("completed"),
  Type.Literal("canceled"),
  Type.Literal("failed"),
  Type.Literal("rejected"),
  Type.Literal("auth-required"),
  Type.Literal("unknown"),
]);
export type V03TaskState = Static<typeof V03TaskStateSchema>;

/** `bytes` or `uri`, exactly one (checked when the part is read, so that the error names the field). */
export const V03FileSchema = Type.Object({
  bytes: Optional(Base64Schema),
  uri: Optional(Type.String({ maxLength: MAX_URI_LENGTH })),
  mimeType: Optional(Name),
  name: Optional(Name),
});
export type V03File = Static<typeof V03FileSchema>;

/**
 * A 0.3 part as a client sends it: `kind` names which of `text`, `file` or `data` it carries. One object schema rather
 * than a union, so that a wrong part is reported by field; the part reader enforces the one-content rule.
 */
export const V03PartInputSchema = Type.Object({
  kind: Optional(Type.Union([Type.Literal("text"), Type.Literal("file"), Type.Literal("data")])),
  text: Optional(Type.String()),
  file: Optional(V03FileSchema),
  data: Optional(MetadataSchema),
  metadata: Optional(MetadataSchema),
});
export type V03PartInput = Static<typeof V03PartInputSchema>;

export const V03MessageInputSchema = Type.Object({
  kind: Optional(Type.Literal("message")),
  messageId: Id,
  role: Type.Union([Type.Literal("user"), Type.Literal("agent")]),
  parts: Type.Array(V03PartInputSchema, { minItems: 1, maxItems: MAX_PARTS }),
  contextId: Optional(Type.String({ maxLength: MAX_ID_LENGTH })),
  taskId: Optional(Type.String({ maxLength: MAX_ID_LENGTH })),
  metadata: Optional(MetadataSchema),
  extensions: Optional(Type.Array(Type.String({ maxLength: MAX_URI_LENGTH }), { maxItems: MAX_LIST_ITEMS })),
  referenceTaskIds: Optional(Type.Array(Type.String({ maxLength: MAX_ID_LENGTH }), { maxItems: MAX_LIST_ITEMS })),
});
export type V03MessageInput = Static<typeof V03MessageInputSchema>;

/** 0.3 webhook credentials: a list of schemes (1.0 keeps one: the first). */
export const V03AuthenticationSchema = Type.Object({
  schemes: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: MAX_LIST_ITEMS }),
  credentials: Optional(Type.String()),
});
export type V03Authentication = Static<typeof V03AuthenticationSchema>;

export const V03PushNotificationConfigSchema = Type.Object({
  id: Optional(Type.String({ maxLength: MAX_ID_LENGTH })),
  url: Type.String({ minLength: 1 }),
  token: Optional(Type.String()),
  authentication: Optional(V03AuthenticationSchema),
});
export type V03PushNotificationConfig = Static<typeof V03PushNotificationConfigSchema>;

export const V03MessageSendParamsSchema = Type.Object({
  message: V03MessageInputSchema,
  configuration: Optional(
    Type.Object({
      acceptedOutputModes: Optional(Type.Array(Name, { maxItems: MAX_LIST_ITEMS })),
      // Absent or true: wait for the task (as 1.0 returnImmediately: false); false: answer at once.
      blocking: Optional(Type.Boolean()),
      historyLength: Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647 })),
      pushNotificationConfig: Optional(V03PushNotificationConfigSchema),
    }),
  ),
  metadata: Optional(MetadataSchema),
});
export type V03MessageSendParams = Static<typeof V03MessageSendParamsSchema>;

export const V03TaskQueryParamsSchema = Type.Object({
  id: Id,
  historyLength: Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647 })),
  metadata: Optional(MetadataSchema),
});
export type V03TaskQueryParams = Static<typeof V03TaskQueryParamsSchema>;

export const V03TaskIdParamsSchema = Type.Object({ id: Id, metadata: Optional(MetadataSchema) });
export type V03TaskIdParams = Static<typeof V03TaskIdParamsSchema>;

/** Params of `tasks/pushNotificationConfig/set`, and the result of set, get and each entry of list. */
export const V03TaskPushNotificationConfigSchema = Type.Object({
  taskId: Id,
  pushNotificationConfig: V03PushNotificationConfigSchema,
});
export type V03TaskPushNotificationConfig = Static<typeof V03TaskPushNotificationConfigSchema>;

/** Without `pushNotificationConfigId`, the config whose id is the task id (the default id of a config). */
export const V03GetPushConfigParamsSchema = Type.Object({
  id: Id,
  pushNotificationConfigId: Optional(Id),
  metadata: Optional(MetadataSchema),
});
export type V03GetPushConfigParams = Static<typeof V03GetPushConfigParamsSchema>;

export const V03DeletePushConfigParamsSchema = Type.Object({
  id: Id,
  pushNotificationConfigId: Id,
  metadata: Optional(MetadataSchema),
});
export type V03DeletePushConfigParams = Static<typeof V03DeletePushConfigParamsSchema>;

// What a 0.3 client reads. `kind` discriminates every object; a data part's `data` is always an object.

export const V03PartSchema = Type.Union([
  Type.Object({ kind: Type.Literal("text"), text: Type.String(), metadata: Optional(MetadataSchema) }),
  Type.Object({ kind: Type.Literal("file"), file: V03FileSchema, metadata: Optional(MetadataSchema) }),
  Type.Object({ kind: Type.Literal("data"), data: MetadataSchema, metadata: Optional(MetadataSchema) }),
]);
export type V03Part = Static<typeof V03PartSchema>;

export const V03MessageSchema = Type.Object({
  kind: Type.Literal("message"),
  messageId: Type.String(),
  role: Type.Union([Type.Literal("user"), Type.Literal("agent")]),
  parts: Type.Array(V03PartSchema),
  contextId: Optional(Type.String()),
  taskId: Optional(Type.String()),
  metadata: Optional(MetadataSchema),
  extensions: Optional(Type.Array(Type.String())),
  referenceTaskIds: Optional(Type.Array(Type.String())),
});
export type V03Message = Static<typeof V03MessageSchema>;

export const V03TaskStatusSchema = Type.Object({
  state: V03TaskStateSchema,
  message: Optional(V03MessageSchema),
  timestamp: Optional(Type.String()),
});
export type V03TaskStatus = Static<typeof V03TaskStatusSchema>;

export const V03ArtifactSchema = Type.Object({
  artifactId: Type.String(),
  name: Optional(Type.String()),
  description: Optional(Type.String()),
  parts: Type.Array(V03PartSchema),
  metadata: Optional(MetadataSchema),
  extensions: Optional(Type.Array(Type.String())),
});
export type V03Artifact = Static<typeof V03ArtifactSchema>;

export const V03TaskSchema = Type.Object({
  kind: Type.Literal("task"),
  id: Type.String(),
  contextId: Type.String(),
  status: V03TaskStatusSchema,
  artifacts: Optional(Type.Array(V03ArtifactSchema)),
  history: Optional(Type.Array(V03MessageSchema)),
  metadata: Optional(MetadataSchema),
});
export type V03Task = Static<typeof V03TaskSchema>;

/** `final` is true on the last event of a stream: the server closes it after this one. */
export const V03StatusUpdateSchema = Type.Object({
  kind: Type.Literal("status-update"),
  taskId: Type.String(),
  contextId: Type.String(),
  status: V03TaskStatusSchema,
  final: Type.Boolean(),
  metadata: Optional(MetadataSchema),
});
export type V03StatusUpdate = Static<typeof V03StatusUpdateSchema>;

export const V03ArtifactUpdateSchema = Type.Object({
  kind: Type.Literal("artifact-update"),
  taskId: Type.String(),
  contextId: Type.String(),
  artifact: V03ArtifactSchema,
  append: Optional(Type.Boolean()),
  lastChunk: Optional(Type.Boolean()),
  metadata: Optional(MetadataSchema),
});
export type V03ArtifactUpdate = Static<typeof V03ArtifactUpdateSchema>;

/** The `result` of one 0.3 SSE event: the object itself, told apart by `kind`. */
export const V03StreamEventSchema = Type.Union([
  V03TaskSchema,
  V03MessageSchema,
  V03StatusUpdateSchema,
  V03ArtifactUpdateSchema,
]);
export type V03StreamEvent = Static<typeof V03StreamEventSchema>;

/** The top-level fields a 0.3 client reads from a card, beside the 1.0 card's own (1.0 parsers ignore them). */
export const V03CardFieldsSchema = Type.Object({
  url: Type.String(),
  preferredTransport: Type.Literal("JSONRPC"),
  protocolVersion: Type.String(),
  /** 0.3's place for capabilities.extendedAgentCard (agent/getAuthenticatedExtendedCard). */
  supportsAuthenticatedExtendedCard: Type.Optional(Type.Boolean()),
});
export type V03CardFields = Static<typeof V03CardFieldsSchema>;
