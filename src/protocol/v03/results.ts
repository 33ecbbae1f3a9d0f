// Writes 1.0 results and stream events as a 0.3 client reads them: `kind` on every object, lowercase states,
// `file` parts, data parts that are always objects, `final` on status updates, webhook configs nested under
// `pushNotificationConfig` with a list of schemes. A 1.0 field 0.3 has no place for (a text part's mediaType or
// filename) is left out.
import type {
  AgentCard,
  Artifact,
  ListTaskPushNotificationConfigsResponse,
  Message,
  Part,
  SendMessageResponse,
  StreamResponse,
  Task,
  TaskPushNotificationConfig,
  TaskState,
  TaskStatus,
} from "../schema/index.ts";
import type { A2aMethod } from "../validate.ts";
import {
  DATA_PART_WRAPPED,
  V03_CARD_PROTOCOL_VERSION,
  type V03Artifact,
  type V03CardFields,
  type V03Message,
  type V03Part,
  type V03StreamEvent,
  type V03Task,
  type V03TaskPushNotificationConfig,
  type V03TaskState,
  type V03TaskStatus,
} from "./schema.ts";

const STATES: Readonly<Record<TaskState, V03TaskState>> = {
  TASK_STATE_SUBMITTED: "submitted",
  TASK_STATE_WORKING: "working",
  TASK_STATE_INPUT_REQUIRED: "input-required",
  TASK_STATE_AUTH_REQUIRED: "auth-required",
  TASK_STATE_COMPLETED: "completed",
  TASK_STATE_FAILED: "failed",
  TASK_STATE_CANCELED: "canceled",
  TASK_STATE_REJECTED: "rejected",
};

export function toV03State(state: TaskState): V03TaskState {
  return STATES[state];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function toV03Part(part: Part): V03Part {
  const withMetadata = <P extends V03Part>(out: P): P =>
    part.metadata === undefined ? out : { ...out, metadata: part.metadata };
  if (part.text !== undefined) return withMetadata({ kind: "text", text: part.text });
  if (part.raw !== undefined || part.url !== undefined) {
    const file: V03Part & { kind: "file" } = {
      kind: "file",
      file: part.raw !== undefined ? { bytes: part.raw } : { uri: part.url ?? "" },
    };
    if (part.mediaType !== undefined && part.mediaType !== "") file.file.mimeType = part.mediaType;
    if (part.filename !== undefined && part.filename !== "") file.file.name = part.filename;
    return withMetadata(file);
  }
  const data: unknown = part.data;
  if (isObject(data)) return withMetadata({ kind: "data", data });
  // 0.3 data is an object: any other JSON value travels as { value } with a flag that a 0.3 reader of ours unwraps.
  return { kind: "data", data: { value: data }, metadata: { ...part.metadata, [DATA_PART_WRAPPED]: true } };
}

export function toV03Message(message: Message): V03Message {
  const out: V03Message = {
    kind: "message",
    messageId: message.messageId,
    role: message.role === "ROLE_USER" ? "user" : "agent",
    parts: message.parts.map(toV03Part),
  };
  if (message.contextId !== undefined && message.contextId !== "") out.contextId = message.contextId;
  if (message.taskId !== undefined && message.taskId !== "") out.taskId = message.taskId;
  if (message.metadata !== undefined) out.metadata = message.metadata;
  if (message.extensions !== undefined && message.extensions.length > 0) out.extensions = message.extensions;
  if (message.referenceTaskIds !== undefined && message.referenceTaskIds.length > 0)
    out.referenceTaskIds = message.referenceTaskIds;
  return out;
}

function toV03Status(status: TaskStatus): V03TaskStatus {
  const out: V03TaskStatus = { state: toV03State(status.state) };
  if (status.message !== undefined) out.message = toV03Message(status.message);
  if (status.timestamp !== undefined) out.timestamp = status.timestamp;
  return out;
}

function toV03Artifact(artifact: Artifact): V03Artifact {
  const out: V03Artifact = { artifactId: artifact.artifactId, parts: artifact.parts.map(toV03Part) };
  if (artifact.name !== undefined) out.name = artifact.name;
  if (artifact.description !== undefined) out.description = artifact.description;
  if (artifact.metadata !== undefined) out.metadata = artifact.metadata;
  if (artifact.extensions !== undefined && artifact.extensions.length > 0) out.extensions = artifact.extensions;
  return out;
}

export function toV03Task(task: Task): V03Task {
  const out: V03Task = { kind: "task", id: task.id, contextId: task.contextId, status: toV03Status(task.status) };
  if (task.artifacts !== undefined) out.artifacts = task.artifacts.map(toV03Artifact);
  if (task.history !== undefined) out.history = task.history.map(toV03Message);
  if (task.metadata !== undefined) out.metadata = task.metadata;
  return out;
}

/** One stream event; `final` says that the stream closes after it (0.3 clients read it as the end). */
export function toV03Event(event: StreamResponse, final: boolean): V03StreamEvent {
  if (event.task !== undefined) return toV03Task(event.task);
  if (event.message !== undefined) return toV03Message(event.message);
  if (event.statusUpdate !== undefined) {
    const { taskId, contextId, status, metadata } = event.statusUpdate;
    const out: V03StreamEvent = { kind: "status-update", taskId, contextId, status: toV03Status(status), final };
    return metadata === undefined ? out : { ...out, metadata };
  }
  const { taskId, contextId, artifact, append, lastChunk, metadata } = event.artifactUpdate;
  const out: V03StreamEvent & { kind: "artifact-update" } = {
    kind: "artifact-update",
    taskId,
    contextId,
    artifact: toV03Artifact(artifact),
  };
  if (append !== undefined) out.append = append;
  if (lastChunk !== undefined) out.lastChunk = lastChunk;
  if (metadata !== undefined) out.metadata = metadata;
  return out;
}

/** A stored webhook config as 0.3 shows it (the credentials were already left out by the operation). */
export function toV03PushConfig(config: TaskPushNotificationConfig): V03TaskPushNotificationConfig {
  const pushNotificationConfig: V03TaskPushNotificationConfig["pushNotificationConfig"] = { url: config.url };
  if (config.id !== undefined) pushNotificationConfig.id = config.id;
  if (config.token !== undefined) pushNotificationConfig.token = config.token;
  if (config.authentication !== undefined) {
    const { scheme, credentials } = config.authentication;
    pushNotificationConfig.authentication =
      credentials === undefined ? { schemes: [scheme] } : { schemes: [scheme], credentials };
  }
  return { taskId: config.taskId ?? "", pushNotificationConfig };
}

/**
 * The top-level fields a 0.3 client reads from a card to find the endpoint and the extended card, taken from the 1.0
 * card (its 0.3 JSON-RPC interface). 1.0 parsers ignore them, and they are not part of a signed 1.0 card.
 */
export function toV03CardFields(card: AgentCard): V03CardFields {
  const { supportedInterfaces } = card;
  const v03 =
    supportedInterfaces.find((i) => i.protocolBinding === "JSONRPC" && i.protocolVersion === "0.3") ??
    supportedInterfaces[0];
  return {
    url: v03?.url ?? "",
    preferredTransport: "JSONRPC",
    protocolVersion: V03_CARD_PROTOCOL_VERSION,
    ...(card.capabilities.extendedAgentCard ? { supportsAuthenticatedExtendedCard: true } : {}),
  };
}

/** A unary method's 1.0 result as the 0.3 method answers it: bare objects, a bare list of configs. */
export function toV03Result(method: A2aMethod, result: unknown): unknown {
  switch (method) {
    case "GetExtendedAgentCard":
      return { ...(result as AgentCard), ...toV03CardFields(result as AgentCard) };
    case "SendMessage": {
      const response = result as SendMessageResponse;
      return response.task !== undefined ? toV03Task(response.task) : toV03Message(response.message);
    }
    case "GetTask":
    case "CancelTask":
      return toV03Task(result as Task);
    case "CreateTaskPushNotificationConfig":
    case "GetTaskPushNotificationConfig":
      return toV03PushConfig(result as TaskPushNotificationConfig);
    case "ListTaskPushNotificationConfigs":
      return (result as ListTaskPushNotificationConfigsResponse).configs.map(toV03PushConfig);
    default:
      return result;
  }
}
