// Params and results of the eleven A2A 1.0 JSON-RPC methods (digest §1.3), as ProtoJSON on the wire.
// Shapes and ranges only: existence, ownership and capability checks belong to the method handlers.

import { type Static, Type } from "@sinclair/typebox";
import { MAX_ID_LENGTH, MAX_LIST_ITEMS, MAX_NAME_LENGTH, MAX_PAGE_TOKEN_LENGTH } from "../limits.ts";
import { MessageSchema, MetadataSchema } from "./message.ts";
import { TaskPushNotificationConfigSchema } from "./push-config.ts";
import { TaskSchema, TimestampSchema } from "./task.ts";
import { TaskStateSchema } from "./task-state.ts";

/** Opaque routing key copied from `AgentInterface.tenant`; optional on every request. */
const Tenant = Type.Optional(Type.String({ maxLength: MAX_NAME_LENGTH }));

/** Unset = no client limit; 0 = no history; N = at most the N most recent messages. */
const HistoryLength = Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647 }));

/** A required resource id: the proto's REQUIRED string, so empty is as good as missing. */
const Id = Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH });

const PageToken = Type.Optional(Type.String({ maxLength: MAX_PAGE_TOKEN_LENGTH }));

const Absent = Type.Optional(Type.Never());

export const SendMessageConfigurationSchema = Type.Object({
  acceptedOutputModes: Type.Optional(
    Type.Array(Type.String({ maxLength: MAX_NAME_LENGTH }), { maxItems: MAX_LIST_ITEMS }),
  ),
  // Inline webhook registration; `taskId` is left empty here.
  taskPushNotificationConfig: Type.Optional(TaskPushNotificationConfigSchema),
  historyLength: HistoryLength,
  // Default false: block until the task is terminal or interrupted. No effect on streaming.
  returnImmediately: Type.Optional(Type.Boolean()),
});
export type SendMessageConfiguration = Static<typeof SendMessageConfigurationSchema>;

/** Params of `SendMessage` and `SendStreamingMessage`. */
export const SendMessageRequestSchema = Type.Object({
  tenant: Tenant,
  message: MessageSchema,
  configuration: Type.Optional(SendMessageConfigurationSchema),
  metadata: Type.Optional(MetadataSchema),
});
export type SendMessageRequest = Static<typeof SendMessageRequestSchema>;

/** The `SendMessage` result: exactly one of `{ task }` or `{ message }`. */
export const SendMessageResponseSchema = Type.Union([
  Type.Object({ task: TaskSchema, message: Absent }),
  Type.Object({ message: MessageSchema, task: Absent }),
]);
export type SendMessageResponse = Static<typeof SendMessageResponseSchema>;

export const GetTaskRequestSchema = Type.Object({
  tenant: Tenant,
  id: Id,
  historyLength: HistoryLength,
});
export type GetTaskRequest = Static<typeof GetTaskRequestSchema>;

/**
 * Every filter is optional. `pageSize` unset means 50. `statusTimestampAfter` is inclusive
 * (status timestamp ≥ value). `pageToken` is opaque; its meaning is checked by the handler.
 */
export const ListTasksRequestSchema = Type.Object({
  tenant: Tenant,
  contextId: Type.Optional(Type.String({ maxLength: MAX_ID_LENGTH })),
  status: Type.Optional(TaskStateSchema),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  pageToken: PageToken,
  historyLength: HistoryLength,
  statusTimestampAfter: Type.Optional(TimestampSchema),
  includeArtifacts: Type.Optional(Type.Boolean()),
});
export type ListTasksRequest = Static<typeof ListTasksRequestSchema>;

/** All four fields are always present; `nextPageToken` is `""` on the last page. */
export const ListTasksResponseSchema = Type.Object({
  tasks: Type.Array(TaskSchema),
  nextPageToken: Type.String(),
  pageSize: Type.Integer({ minimum: 0 }),
  totalSize: Type.Integer({ minimum: 0 }),
});
export type ListTasksResponse = Static<typeof ListTasksResponseSchema>;

export const CancelTaskRequestSchema = Type.Object({
  tenant: Tenant,
  id: Id,
  metadata: Type.Optional(MetadataSchema),
});
export type CancelTaskRequest = Static<typeof CancelTaskRequestSchema>;

export const SubscribeToTaskRequestSchema = Type.Object({
  tenant: Tenant,
  id: Id,
});
export type SubscribeToTaskRequest = Static<typeof SubscribeToTaskRequestSchema>;

/** `taskId` names the task, `id` the push config within it. */
export const GetTaskPushNotificationConfigRequestSchema = Type.Object({
  tenant: Tenant,
  taskId: Id,
  id: Id,
});
export type GetTaskPushNotificationConfigRequest = Static<typeof GetTaskPushNotificationConfigRequestSchema>;

export const DeleteTaskPushNotificationConfigRequestSchema = Type.Object({
  tenant: Tenant,
  taskId: Id,
  id: Id,
});
export type DeleteTaskPushNotificationConfigRequest = Static<typeof DeleteTaskPushNotificationConfigRequestSchema>;

/** `pageSize` is a plain proto int32 here: 0 (or unset) means the server's default. */
export const ListTaskPushNotificationConfigsRequestSchema = Type.Object({
  tenant: Tenant,
  taskId: Id,
  pageSize: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647 })),
  pageToken: PageToken,
});
export type ListTaskPushNotificationConfigsRequest = Static<typeof ListTaskPushNotificationConfigsRequestSchema>;

/** `nextPageToken` is empty or absent on the last page. */
export const ListTaskPushNotificationConfigsResponseSchema = Type.Object({
  configs: Type.Array(TaskPushNotificationConfigSchema),
  nextPageToken: Type.Optional(Type.String()),
});
export type ListTaskPushNotificationConfigsResponse = Static<typeof ListTaskPushNotificationConfigsResponseSchema>;

/** Params may be omitted entirely for this method. */
export const GetExtendedAgentCardRequestSchema = Type.Object({
  tenant: Tenant,
});
export type GetExtendedAgentCardRequest = Static<typeof GetExtendedAgentCardRequestSchema>;
