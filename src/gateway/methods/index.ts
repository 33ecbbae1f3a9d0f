// The method table: one handler per A2A 1.0 JSON-RPC method name.
import type { A2aMethod } from "../schema/index.ts";
import { listTasks } from "./list-tasks.ts";
import type { MethodHandler } from "./method-call.ts";
import { sendMessage } from "./send-message.ts";
import { cancelTask, getTask } from "./task-methods.ts";
import { extendedCardUnsupported, pushUnsupported, streamingUnsupported } from "./unsupported.ts";

export type { MethodCall, MethodHandler } from "./method-call.ts";

export const METHODS: { readonly [M in A2aMethod]: MethodHandler<M> } = {
  SendMessage: sendMessage,
  SendStreamingMessage: streamingUnsupported,
  GetTask: getTask,
  ListTasks: listTasks,
  CancelTask: cancelTask,
  SubscribeToTask: streamingUnsupported,
  CreateTaskPushNotificationConfig: pushUnsupported,
  GetTaskPushNotificationConfig: pushUnsupported,
  ListTaskPushNotificationConfigs: pushUnsupported,
  DeleteTaskPushNotificationConfig: pushUnsupported,
  GetExtendedAgentCard: extendedCardUnsupported,
};
