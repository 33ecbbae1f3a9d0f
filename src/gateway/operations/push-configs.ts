// CreateTaskPushNotificationConfig, Get…, List…Configs and Delete…: a client's webhook registrations on its own tasks
// in this profile. They store and read configs only; workers deliver. Another client's task is exactly a missing one.

import { randomUUID } from "node:crypto";
import { PushConfigLimitError, PushConfigs, type StoredPushConfig } from "../../journal/index.ts";
import type { ListTaskPushNotificationConfigsResponse } from "../../protocol/index.ts";
import { InvalidParamsError, TaskNotFoundError, type TaskPushNotificationConfig } from "../../protocol/index.ts";
import { checkPushConfig, publicConfig, requirePush } from "../push-config-rules.ts";
import type { OperationCall } from "./operation-call.ts";

type PushMethod =
  | "CreateTaskPushNotificationConfig"
  | "GetTaskPushNotificationConfig"
  | "ListTaskPushNotificationConfigs"
  | "DeleteTaskPushNotificationConfig";

/** -32001 for a config the caller's task does not have (the digest's "unknown push config"). */
export class PushConfigNotFoundError extends TaskNotFoundError {
  constructor(taskId: string) {
    super(taskId);
    this.message = "Push notification config not found";
  }
}

/** The configs store of this call, after the capability check (-32003 comes before any Redis read). */
function store<M extends PushMethod>(call: OperationCall<M>): PushConfigs {
  requirePush(call.context.config, call.profile.profile);
  return new PushConfigs(call.context.redis, call.context.keys, call.context.journal.replicaAck);
}

/**
 * Stores a config on one of the caller's tasks and answers with it. A config sent with an `id` creates or replaces
 * that one; without one it gets a fresh id, so it never replaces a config the task already has.
 */
export async function createTaskPushNotificationConfig(
  call: OperationCall<"CreateTaskPushNotificationConfig">,
): Promise<TaskPushNotificationConfig> {
  const configs = store(call);
  const { params, client } = call;
  const taskId = params.taskId;
  if (taskId === undefined || taskId === "") {
    throw new InvalidParamsError("Invalid params: taskId: required", [
      { field: "taskId", description: "the task this config is for is required" },
    ]);
  }
  const checked = checkPushConfig(params, call.context.config.push.allowHosts);
  const stored: StoredPushConfig = { ...checked, id: checked.id || randomUUID(), taskId };
  const max = call.context.config.push.maxConfigsPerTask;
  try {
    await configs.create(client.id, call.profile.profile.name, stored, max, {
      clientMaxStoredBytes: call.context.config.clients.maxStoredBytes,
      profileMaxStoredBytes: call.profile.profile.quota.maxStoredBytes,
      retryAfterSeconds: call.context.config.worker.heartbeatSeconds,
    });
  } catch (error) {
    if (!(error instanceof PushConfigLimitError)) throw error;
    throw new InvalidParamsError(
      `The task has as many push notification configs as allowed (${max})`,
      [{ field: "taskId", description: "push config limit reached; delete one first" }],
      "PUSH_CONFIG_LIMIT_EXCEEDED",
    );
  }
  return publicConfig(stored);
}

export async function getTaskPushNotificationConfig(
  call: OperationCall<"GetTaskPushNotificationConfig">,
): Promise<TaskPushNotificationConfig> {
  const { params, client } = call;
  const found = await store(call).get(client.id, call.profile.profile.name, params.taskId, params.id);
  if (found === undefined) throw new PushConfigNotFoundError(params.taskId);
  return publicConfig(found);
}

/** Every config of the task on one page (a task holds at most push.maxConfigsPerTask): `nextPageToken` is "". */
export async function listTaskPushNotificationConfigs(
  call: OperationCall<"ListTaskPushNotificationConfigs">,
): Promise<ListTaskPushNotificationConfigsResponse> {
  const configs = store(call);
  const { params, client } = call;
  if (params.pageToken !== undefined && params.pageToken !== "") {
    throw new InvalidParamsError("pageToken is not a token this server issued", [
      { field: "pageToken", description: "this server answers every config on one page" },
    ]);
  }
  const found = await configs.list(client.id, call.profile.profile.name, params.taskId);
  return { configs: found.map(publicConfig), nextPageToken: "" };
}

/** Deletes a config; a config that does not exist is not an error (idempotent). The result is null, as the SDKs send. */
export async function deleteTaskPushNotificationConfig(
  call: OperationCall<"DeleteTaskPushNotificationConfig">,
): Promise<null> {
  const { params, client } = call;
  await store(call).delete(client.id, call.profile.profile.name, params.taskId, params.id);
  return null;
}
