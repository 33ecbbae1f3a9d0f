// A typed A2A 1.0 client over JSON-RPC + SSE: one method per A2A method, plain ProtoJSON objects in and out. It checks
// the shape of each answer's top level (the member that discriminates it) and trusts the content otherwise.
import type {
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  SendMessageRequest,
  SendMessageResponse,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from "../protocol/index.ts";
import { ResponseError } from "./client-errors.ts";
import { type CallOptions, JsonRpcTransport, type TransportOptions } from "./jsonrpc-transport.ts";

const STREAM_KEYS = ["task", "message", "statusUpdate", "artifactUpdate"] as const;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function asTask(method: string, value: unknown): Task {
  if (!isRecord(value) || typeof value.id !== "string" || !isRecord(value.status))
    throw new ResponseError(`${method}: the result is not a Task`, 200);
  return value as Task;
}

function asSendResponse(value: unknown): SendMessageResponse {
  if (isRecord(value) && isRecord(value.task)) return { task: asTask("SendMessage", value.task) };
  if (isRecord(value) && isRecord(value.message)) return value as SendMessageResponse;
  throw new ResponseError("SendMessage: the result holds neither task nor message", 200);
}

function asStreamResponse(method: string, value: unknown): StreamResponse {
  const present = isRecord(value) ? STREAM_KEYS.filter((key) => isRecord(value[key])) : [];
  if (present.length !== 1)
    throw new ResponseError(
      `${method}: an event is not a StreamResponse (task, message, statusUpdate or artifactUpdate)`,
      200,
    );
  return value as StreamResponse;
}

export class A2aClient {
  readonly transport: JsonRpcTransport;

  constructor(options: TransportOptions) {
    this.transport = new JsonRpcTransport(options);
  }

  /** The JSON-RPC endpoint this client calls. */
  get endpoint(): string {
    return this.transport.endpoint;
  }

  /** Blocks until the task is terminal or interrupted, unless `configuration.returnImmediately` is true. */
  async sendMessage(params: SendMessageRequest, options?: CallOptions): Promise<SendMessageResponse> {
    return asSendResponse(await this.transport.call("SendMessage", params, options));
  }

  /** Yields the task snapshot first, then its status and artifact updates, until the server closes the stream. */
  async *sendStreamingMessage(params: SendMessageRequest, options?: CallOptions): AsyncGenerator<StreamResponse> {
    for await (const event of this.transport.stream("SendStreamingMessage", params, options))
      yield asStreamResponse("SendStreamingMessage", event);
  }

  /** Yields a current snapshot of the task, then its updates, until the server closes the stream. */
  async *subscribeToTask(params: SubscribeToTaskRequest, options?: CallOptions): AsyncGenerator<StreamResponse> {
    for await (const event of this.transport.stream("SubscribeToTask", params, options))
      yield asStreamResponse("SubscribeToTask", event);
  }

  async getTask(params: GetTaskRequest, options?: CallOptions): Promise<Task> {
    return asTask("GetTask", await this.transport.call("GetTask", params, options));
  }

  async listTasks(params: ListTasksRequest, options?: CallOptions): Promise<ListTasksResponse> {
    const value = await this.transport.call("ListTasks", params, options);
    if (!isRecord(value) || !Array.isArray(value.tasks))
      throw new ResponseError("ListTasks: the result has no tasks list", 200);
    return value as ListTasksResponse;
  }

  async cancelTask(params: CancelTaskRequest, options?: CallOptions): Promise<Task> {
    return asTask("CancelTask", await this.transport.call("CancelTask", params, options));
  }

  async createTaskPushNotificationConfig(
    params: TaskPushNotificationConfig,
    options?: CallOptions,
  ): Promise<TaskPushNotificationConfig> {
    return (await this.transport.call(
      "CreateTaskPushNotificationConfig",
      params,
      options,
    )) as TaskPushNotificationConfig;
  }

  async getTaskPushNotificationConfig(
    params: GetTaskPushNotificationConfigRequest,
    options?: CallOptions,
  ): Promise<TaskPushNotificationConfig> {
    return (await this.transport.call("GetTaskPushNotificationConfig", params, options)) as TaskPushNotificationConfig;
  }

  async listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
    options?: CallOptions,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    const value = await this.transport.call("ListTaskPushNotificationConfigs", params, options);
    if (!isRecord(value) || !Array.isArray(value.configs))
      throw new ResponseError("ListTaskPushNotificationConfigs: the result has no configs list", 200);
    return value as ListTaskPushNotificationConfigsResponse;
  }

  /** Resolves once deleted; the result (`null` or `{}`) carries nothing. */
  async deleteTaskPushNotificationConfig(
    params: DeleteTaskPushNotificationConfigRequest,
    options?: CallOptions,
  ): Promise<void> {
    await this.transport.call("DeleteTaskPushNotificationConfig", params, options);
  }
}
