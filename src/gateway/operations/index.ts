// The operations table: one plain function per A2A 1.0 method; the two streaming ones resolve with a source of
// StreamResponses, the others with the method's response message. Bindings look operations up here by method name.
import type { A2aMethod } from "../../protocol/index.ts";
import { getExtendedAgentCard } from "./extended-card.ts";
import { listTasks } from "./list-tasks.ts";
import type { Operation, StreamOperation } from "./operation-call.ts";
import {
  createTaskPushNotificationConfig,
  deleteTaskPushNotificationConfig,
  getTaskPushNotificationConfig,
  listTaskPushNotificationConfigs,
} from "./push-configs.ts";
import { sendMessage } from "./send-message.ts";
import { sendStreamingMessage, subscribeToTask } from "./stream-methods.ts";
import { cancelTask, getTask } from "./task-methods.ts";

export type { Operation, OperationCall, StreamOperation } from "./operation-call.ts";

export const STREAM_METHOD_NAMES = ["SendStreamingMessage", "SubscribeToTask"] as const;
export type StreamMethod = (typeof STREAM_METHOD_NAMES)[number];
export type UnaryMethod = Exclude<A2aMethod, StreamMethod>;

export function isStreamMethod(method: A2aMethod): method is StreamMethod {
  return (STREAM_METHOD_NAMES as readonly string[]).includes(method);
}

export const STREAM_OPERATIONS: { readonly [M in StreamMethod]: StreamOperation<M> } = {
  SendStreamingMessage: sendStreamingMessage,
  SubscribeToTask: subscribeToTask,
};

export const OPERATIONS: { readonly [M in UnaryMethod]: Operation<M> } = {
  SendMessage: sendMessage,
  GetTask: getTask,
  ListTasks: listTasks,
  CancelTask: cancelTask,
  CreateTaskPushNotificationConfig: createTaskPushNotificationConfig,
  GetTaskPushNotificationConfig: getTaskPushNotificationConfig,
  ListTaskPushNotificationConfigs: listTaskPushNotificationConfigs,
  DeleteTaskPushNotificationConfig: deleteTaskPushNotificationConfig,
  GetExtendedAgentCard: getExtendedAgentCard,
};
