// Reads a 0.3 request as the 1.0 request the operations take: its params are checked against the 0.3 schema (errors
// name 0.3 fields), rebuilt field by field as 1.0 objects (whatever else the client sent is left behind) and checked
// again as 1.0 params. Parts lose `kind`, `file` becomes `raw` or `url`, roles and `blocking` invert to 1.0 terms.
import type { Static, TSchema } from "@sinclair/typebox";
import {
  type A2aCall,
  type A2aMethod,
  type CheckResult,
  checkParams,
  compileChecker,
  type Violation,
} from "../validate.ts";
import { V03_METHODS, type V03Method } from "./methods.ts";
import {
  DATA_PART_WRAPPED,
  V03DeletePushConfigParamsSchema,
  V03GetPushConfigParamsSchema,
  type V03MessageInput,
  type V03MessageSendParams,
  V03MessageSendParamsSchema,
  type V03PartInput,
  type V03PushNotificationConfig,
  V03TaskIdParamsSchema,
  V03TaskPushNotificationConfigSchema,
  V03TaskQueryParamsSchema,
} from "./schema.ts";

type Plain = Record<string, unknown>;

/** Only the keys whose value is defined. */
function defined(entries: Plain): Plain {
  const out: Plain = {};
  for (const [key, value] of Object.entries(entries)) if (value !== undefined) out[key] = value;
  return out;
}

function partToV1(part: V03PartInput, field: string, violations: Violation[]): Plain {
  const present = (["text", "file", "data"] as const).filter((key) => part[key] !== undefined);
  const [content] = present;
  if (present.length !== 1 || content === undefined) {
    const description =
      present.length === 0
        ? "Expected one of text, file, data"
        : `Expected one of text, file, data, found ${present.join(" and ")}`;
    violations.push({ field, description });
    return {};
  }
  if (part.kind !== undefined && part.kind !== content) {
    violations.push({ field: `${field}.kind`, description: `Expected "${content}" for a part with ${content}` });
  }
  if (content === "text") return defined({ text: part.text, metadata: part.metadata });
  if (content === "data") {
    const data = part.data ?? {};
    const metadata = part.metadata;
    if (metadata?.[DATA_PART_WRAPPED] === true && Object.hasOwn(data, "value")) {
      const { [DATA_PART_WRAPPED]: _flag, ...rest } = metadata;
      return defined({ data: data.value, metadata: Object.keys(rest).length > 0 ? rest : undefined });
    }
    return defined({ data, metadata });
  }
  const file = part.file ?? {};
  if ((file.bytes === undefined) === (file.uri === undefined)) {
    violations.push({ field: `${field}.file`, description: "Expected exactly one of bytes, uri" });
    return {};
  }
  return defined({
    raw: file.bytes,
    url: file.uri,
    mediaType: file.mimeType,
    filename: file.name,
    metadata: part.metadata,
  });
}

function messageToV1(message: V03MessageInput, violations: Violation[]): Plain {
  return defined({
    messageId: message.messageId,
    role: message.role === "user" ? "ROLE_USER" : "ROLE_AGENT",
    parts: message.parts.map((part, index) => partToV1(part, `message.parts[${index}]`, violations)),
    contextId: message.contextId,
    taskId: message.taskId,
    metadata: message.metadata,
    extensions: message.extensions,
    referenceTaskIds: message.referenceTaskIds,
  });
}

/** A 0.3 webhook config as a 1.0 TaskPushNotificationConfig; of several auth schemes the first is kept. */
function pushConfigToV1(config: V03PushNotificationConfig, taskId?: string): Plain {
  const authentication = config.authentication;
  return defined({
    id: config.id,
    taskId,
    url: config.url,
    token: config.token,
    authentication:
      authentication === undefined
        ? undefined
        : defined({ scheme: authentication.schemes[0], credentials: authentication.credentials }),
  });
}

type Reader = (params: unknown, violations: Violation[]) => Plain | undefined;

/** Checks params against a 0.3 schema, then builds the 1.0 params from what passed. */
function reader<S extends TSchema>(schema: S, build: (value: Static<S>, violations: Violation[]) => Plain): Reader {
  const check = compileChecker(schema);
  return (params, violations) => {
    const checked = check(params);
    if (!checked.ok) {
      violations.push(...checked.violations);
      return undefined;
    }
    return build(checked.value, violations);
  };
}

const READERS: { readonly [M in V03Method]: Reader } = {
  "message/send": reader(V03MessageSendParamsSchema, sendToV1),
  "message/stream": reader(V03MessageSendParamsSchema, sendToV1),
  "tasks/get": reader(V03TaskQueryParamsSchema, (p) => defined({ id: p.id, historyLength: p.historyLength })),
  "tasks/cancel": reader(V03TaskIdParamsSchema, (p) => defined({ id: p.id, metadata: p.metadata })),
  "tasks/resubscribe": reader(V03TaskIdParamsSchema, (p) => ({ id: p.id })),
  // 0.3 names a config without an id by its task id (its get without pushNotificationConfigId reads that one).
  "tasks/pushNotificationConfig/set": reader(V03TaskPushNotificationConfigSchema, (p) =>
    pushConfigToV1({ ...p.pushNotificationConfig, id: p.pushNotificationConfig.id || p.taskId }, p.taskId),
  ),
  "tasks/pushNotificationConfig/get": reader(V03GetPushConfigParamsSchema, (p) => ({
    taskId: p.id,
    id: p.pushNotificationConfigId ?? p.id,
  })),
  "tasks/pushNotificationConfig/list": reader(V03TaskIdParamsSchema, (p) => ({ taskId: p.id })),
  "tasks/pushNotificationConfig/delete": reader(V03DeletePushConfigParamsSchema, (p) => ({
    taskId: p.id,
    id: p.pushNotificationConfigId,
  })),
  "agent/getAuthenticatedExtendedCard": () => ({}),
};

function sendToV1(params: V03MessageSendParams, violations: Violation[]): Plain {
  const configuration = params.configuration;
  return defined({
    message: messageToV1(params.message, violations),
    configuration:
      configuration === undefined
        ? undefined
        : defined({
            acceptedOutputModes: configuration.acceptedOutputModes,
            historyLength: configuration.historyLength,
            returnImmediately: configuration.blocking === false ? true : undefined,
            taskPushNotificationConfig:
              configuration.pushNotificationConfig === undefined
                ? undefined
                : pushConfigToV1(configuration.pushNotificationConfig),
          }),
    metadata: params.metadata,
  });
}

/**
 * The 1.0 method and params of a 0.3 request, or the violations that make it -32602 (0.3 field names for what the 0.3
 * schema refuses; 1.0 names for the 1.0 checks that come after, such as a length limit).
 */
export function readV03Request(method: V03Method, params: unknown): CheckResult<A2aCall> {
  const violations: Violation[] = [];
  const v1 = READERS[method](params === undefined ? {} : params, violations);
  if (v1 === undefined || violations.length > 0) return { ok: false, violations };
  const v1Method: A2aMethod = V03_METHODS[method];
  const checked = checkParams(v1Method, v1);
  if (!checked.ok) return checked;
  return { ok: true, value: { method: v1Method, params: checked.value } as A2aCall };
}
