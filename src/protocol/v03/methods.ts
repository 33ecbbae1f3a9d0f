// The A2A 0.3 JSON-RPC method names and the 1.0 method each one is served by. 0.3 has no ListTasks over JSON-RPC.
import type { A2aMethod } from "../validate.ts";

export const V03_METHODS = {
  "message/send": "SendMessage",
  "message/stream": "SendStreamingMessage",
  "tasks/get": "GetTask",
  "tasks/cancel": "CancelTask",
  "tasks/resubscribe": "SubscribeToTask",
  "tasks/pushNotificationConfig/set": "CreateTaskPushNotificationConfig",
  "tasks/pushNotificationConfig/get": "GetTaskPushNotificationConfig",
  "tasks/pushNotificationConfig/list": "ListTaskPushNotificationConfigs",
  "tasks/pushNotificationConfig/delete": "DeleteTaskPushNotificationConfig",
  "agent/getAuthenticatedExtendedCard": "GetExtendedAgentCard",
} as const satisfies Record<string, A2aMethod>;
export type V03Method = keyof typeof V03_METHODS;

export function isV03Method(name: unknown): name is V03Method {
  return typeof name === "string" && Object.hasOwn(V03_METHODS, name);
}

const BY_V1 = new Map<A2aMethod, V03Method>(
  Object.entries(V03_METHODS).map(([v03, v1]) => [v1 as A2aMethod, v03 as V03Method]),
);

/** The 0.3 name of a 1.0 method, when 0.3 has one. */
export function v03MethodOf(method: A2aMethod): V03Method | undefined {
  return BY_V1.get(method);
}
