// Part, Message and Artifact: the content objects of A2A 1.0, plus the shared metadata shape.
// A Part is a proto oneof: exactly one of text | raw | url | data, with no `kind` discriminator.

import { type Static, Type } from "@sinclair/typebox";
import {
  MAX_ID_LENGTH,
  MAX_LIST_ITEMS,
  MAX_METADATA_KEYS,
  MAX_NAME_LENGTH,
  MAX_PARTS,
  MAX_URI_LENGTH,
} from "../limits.ts";
import { RoleSchema } from "./task-state.ts";

/** A `google.protobuf.Struct`: any JSON object (never an array or null). */
export const MetadataSchema = Type.Record(Type.String(), Type.Unknown(), { maxProperties: MAX_METADATA_KEYS });
export type Metadata = Static<typeof MetadataSchema>;

/** Standard or URL-safe base64, padded or not (ProtoJSON readers accept all four). */
export const Base64Schema = Type.String({
  pattern: "^[A-Za-z0-9+/_-]*={0,2}$",
  description: "a base64 string",
});

/** The content keys of a Part; exactly one of them must be present. */
export const PART_CONTENT_KEYS = ["text", "raw", "url", "data"] as const;
export type PartContentKey = (typeof PART_CONTENT_KEYS)[number];

// The other content keys are declared absent in each variant, so an object with two of them
// matches no variant and the union rejects it.
const Absent = Type.Optional(Type.Never());

const PartCommon = {
  metadata: Type.Optional(MetadataSchema),
  filename: Type.Optional(Type.String({ maxLength: MAX_NAME_LENGTH })),
  mediaType: Type.Optional(Type.String({ maxLength: MAX_NAME_LENGTH })),
};

export const TextPartSchema = Type.Object({
  ...PartCommon,
  text: Type.String(),
  raw: Absent,
  url: Absent,
  data: Absent,
});
export type TextPart = Static<typeof TextPartSchema>;

export const RawPartSchema = Type.Object({ ...PartCommon, raw: Base64Schema, text: Absent, url: Absent, data: Absent });
export type RawPart = Static<typeof RawPartSchema>;

export const UrlPartSchema = Type.Object({
  ...PartCommon,
  url: Type.String({ maxLength: MAX_URI_LENGTH }),
  text: Absent,
  raw: Absent,
  data: Absent,
});
export type UrlPart = Static<typeof UrlPartSchema>;

/** `data` is a `google.protobuf.Value`: any JSON value, null included. */
export const DataPartSchema = Type.Object({
  ...PartCommon,
  data: Type.Unknown(),
  text: Absent,
  raw: Absent,
  url: Absent,
});
export type DataPart = Static<typeof DataPartSchema>;

export const PartSchema = Type.Union([TextPartSchema, RawPartSchema, UrlPartSchema, DataPartSchema]);
export type Part = Static<typeof PartSchema>;

/**
 * One unit of communication. Agent-authored messages must carry `contextId`, and `taskId` when a
 * task exists; that is the producer's duty, not checked here.
 */
export const MessageSchema = Type.Object({
  messageId: Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH }),
  contextId: Type.Optional(Type.String({ maxLength: MAX_ID_LENGTH })),
  taskId: Type.Optional(Type.String({ maxLength: MAX_ID_LENGTH })),
  role: RoleSchema,
  parts: Type.Array(PartSchema, { minItems: 1, maxItems: MAX_PARTS }),
  metadata: Type.Optional(MetadataSchema),
  // URIs of the extensions present in or contributing to this message.
  extensions: Type.Optional(Type.Array(Type.String({ maxLength: MAX_URI_LENGTH }), { maxItems: MAX_LIST_ITEMS })),
  referenceTaskIds: Type.Optional(Type.Array(Type.String({ maxLength: MAX_ID_LENGTH }), { maxItems: MAX_LIST_ITEMS })),
});
export type Message = Static<typeof MessageSchema>;

/** A task output. `artifactId` is unique within its task. */
export const ArtifactSchema = Type.Object({
  artifactId: Type.String({ minLength: 1 }),
  name: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  parts: Type.Array(PartSchema, { minItems: 1 }),
  metadata: Type.Optional(MetadataSchema),
  extensions: Type.Optional(Type.Array(Type.String())),
});
export type Artifact = Static<typeof ArtifactSchema>;
