// Task and TaskStatus as stored by the journal and returned by GetTask/ListTasks/CancelTask,
// plus the wire timestamp format (RFC 3339 in UTC with a `Z`, never an offset).

import { type Static, Type } from "@sinclair/typebox";
import { ArtifactSchema, MessageSchema, MetadataSchema } from "./message.ts";
import { TaskStateSchema } from "./task-state.ts";

/**
 * `YYYY-MM-DDTHH:mm:ss[.fraction]Z`. Emit `new Date().toISOString()` (milliseconds); accept any
 * fraction length, as ProtoJSON readers do. Offsets such as `+02:00` are rejected.
 */
export const TimestampSchema = Type.String({
  pattern: "^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])T([01]\\d|2[0-3]):[0-5]\\d:([0-5]\\d|60)(\\.\\d{1,9})?Z$",
  description: "an ISO-8601 UTC timestamp ending in Z, e.g. 2026-01-05T10:00:00.000Z",
});
export type Timestamp = Static<typeof TimestampSchema>;

export const TaskStatusSchema = Type.Object({
  state: TaskStateSchema,
  message: Type.Optional(MessageSchema),
  timestamp: Type.Optional(TimestampSchema),
});
export type TaskStatus = Static<typeof TaskStatusSchema>;

/**
 * `id` is always server-generated. `contextId` is optional in the proto, but this server always
 * generates and returns one, so the schema requires it.
 */
export const TaskSchema = Type.Object({
  id: Type.String({ minLength: 1 }),
  contextId: Type.String({ minLength: 1 }),
  status: TaskStatusSchema,
  artifacts: Type.Optional(Type.Array(ArtifactSchema)),
  history: Type.Optional(Type.Array(MessageSchema)),
  metadata: Type.Optional(MetadataSchema),
});
export type Task = Static<typeof TaskSchema>;
