// Task events and the StreamResponse envelope: what each SSE `result` and each webhook body holds.
// 1.0 has no `final` flag and no `index`: closing the stream ends it, `artifactId` ties chunks together.

import { type Static, Type } from "@sinclair/typebox";
import { ArtifactSchema, MessageSchema, MetadataSchema } from "./message.ts";
import { TaskSchema, TaskStatusSchema } from "./task.ts";

export const TaskStatusUpdateEventSchema = Type.Object({
  taskId: Type.String({ minLength: 1 }),
  contextId: Type.String({ minLength: 1 }),
  status: TaskStatusSchema,
  metadata: Type.Optional(MetadataSchema),
});
export type TaskStatusUpdateEvent = Static<typeof TaskStatusUpdateEventSchema>;

/**
 * `append: true` adds these parts to the artifact already sent with the same `artifactId`;
 * `lastChunk: true` marks that artifact complete. Both default to false and are then omitted.
 */
export const TaskArtifactUpdateEventSchema = Type.Object({
  taskId: Type.String({ minLength: 1 }),
  contextId: Type.String({ minLength: 1 }),
  artifact: ArtifactSchema,
  append: Type.Optional(Type.Boolean()),
  lastChunk: Type.Optional(Type.Boolean()),
  metadata: Type.Optional(MetadataSchema),
});
export type TaskArtifactUpdateEvent = Static<typeof TaskArtifactUpdateEventSchema>;

/** The member keys of the StreamResponse oneof; the key present is the discriminator. */
export const STREAM_RESPONSE_KEYS = ["task", "message", "statusUpdate", "artifactUpdate"] as const;
export type StreamResponseKey = (typeof STREAM_RESPONSE_KEYS)[number];

// Each variant declares the other members absent, so an object with two members is rejected.
const Absent = Type.Optional(Type.Never());

/**
 * One SSE event's `result`, and the whole body of a push notification (no JSON-RPC envelope).
 * A task stream starts with `task`; a message-only stream carries exactly one `message`.
 */
export const StreamResponseSchema = Type.Union([
  Type.Object({ task: TaskSchema, message: Absent, statusUpdate: Absent, artifactUpdate: Absent }),
  Type.Object({ message: MessageSchema, task: Absent, statusUpdate: Absent, artifactUpdate: Absent }),
  Type.Object({ statusUpdate: TaskStatusUpdateEventSchema, task: Absent, message: Absent, artifactUpdate: Absent }),
  Type.Object({ artifactUpdate: TaskArtifactUpdateEventSchema, task: Absent, message: Absent, statusUpdate: Absent }),
]);
export type StreamResponse = Static<typeof StreamResponseSchema>;
