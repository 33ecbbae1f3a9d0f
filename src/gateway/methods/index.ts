// The method table: one handler per A2A 1.0 JSON-RPC method name; the two streaming methods answer with an SSE
// response of their own, the others with a JSON-RPC result.
import type { A2aMethod } from "../../protocol/index.ts";
import { listTasks } from "./list-tasks.ts";
import type { MethodHandler, StreamMethodHandler } from "./method-call.ts";
import {
  createTaskPushNotificationConfig,
  deleteTaskPushNotificationConfig,
  getTaskPushNotificationConfig,
  listTaskPushNotificationConfigs,
} from "./push-configs.ts";
import { sendMessage } from "./send-message.ts";
import { sendStreamingMessage, subscribeToTask } from "./stream-methods.ts";
import { cancelTask, getTask } from "./task-methods.ts";
import { extendedCardUnsupported } from "./unsupported.ts";

export type { MethodCall, MethodHandler, StreamCall, StreamMethodHandler } from "./method-call.ts";

export const STREAM_METHOD_NAMES = ["SendStreamingMessage", "SubscribeToTask"] as const;
export type StreamMethod = (typeof STREAM_METHOD_NAMES)[number];

export function isStreamMethod(method: A2aMethod): method is StreamMethod {
  return (STREAM_METHOD_NAMES as readonly string[]).includes(method);
}

export const STREAM_METHODS: { readonly [M in StreamMethod]: StreamMethodHandler<M> } = {
  SendStreamingMessage: sendStreamingMessage,
  SubscribeToTask: subscribeToTask,
};

export const METHODS: { readonly [M in Exclude<A2aMethod, StreamMethod>]: MethodHandler<M> } = {
  SendMessage: sendMessage,
  GetTask: getTask,
  ListTasks: listTasks,
  CancelTask: cancelTask,
  CreateTaskPushNotificationConfig: createTaskPushNotificationConfig,
  GetTaskPushNotificationConfig: getTaskPushNotificationConfig,
  ListTaskPushNotificationConfigs: listTaskPushNotificationConfigs,
  DeleteTaskPushNotificationConfig: deleteTaskPushNotificationConfig,
  GetExtendedAgentCard: extendedCardUnsupported,
};
