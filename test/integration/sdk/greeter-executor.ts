// An @a2a-js/sdk AgentExecutor that asks for input, in the SDK samples' style: the first turn publishes the task and
// an INPUT_REQUIRED status with its question; the follow-up (requestContext.task is set, its history holds the whole
// conversation) answers with an artifact and COMPLETED. Nothing in it knows about a2a-runtime.
import { type Message, Role, type Task, TaskState } from "@a2a-js/sdk";
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from "@a2a-js/sdk/server";

function textPart(value: string) {
  return { content: { $case: "text" as const, value }, metadata: undefined, filename: "", mediaType: "text/plain" };
}

function textOf(message: Message): string {
  return message.parts.map((part) => (part.content?.$case === "text" ? part.content.value : "")).join("");
}

export class GreeterAgentExecutor implements AgentExecutor {
  public cancelTask = async (_taskId: string, _eventBus: ExecutionEventBus): Promise<void> => {};

  async execute(requestContext: RequestContext, eventBus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId, userMessage } = requestContext;
    const existingTask = requestContext.task;
    const task: Task = existingTask ?? {
      id: taskId,
      contextId,
      status: { state: TaskState.TASK_STATE_SUBMITTED, timestamp: new Date().toISOString(), message: undefined },
      artifacts: [],
      history: [userMessage],
      metadata: undefined,
    };
    eventBus.publish(AgentEvent.task(task));

    if (!existingTask) {
      const question: Message = {
        role: Role.ROLE_AGENT,
        messageId: crypto.randomUUID(),
        parts: [textPart("What is your name?")],
        taskId,
        contextId,
        extensions: [],
        metadata: {},
        referenceTaskIds: [],
      };
      eventBus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: {
            state: TaskState.TASK_STATE_INPUT_REQUIRED,
            message: question,
            timestamp: new Date().toISOString(),
          },
          metadata: {},
        }),
      );
      return;
    }

    const firstWords = textOf(existingTask.history[0] ?? userMessage);
    eventBus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: {
          artifactId: "greeting",
          name: "Greeting",
          description: "",
          parts: [textPart(`Hello, ${textOf(userMessage)}! You first said "${firstWords}".`)],
          metadata: undefined,
          extensions: [],
        },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
    eventBus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_COMPLETED, timestamp: new Date().toISOString(), message: undefined },
        metadata: {},
      }),
    );
  }
}
