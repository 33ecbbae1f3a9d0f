// An @a2a-js/sdk AgentExecutor written the way the SDK's samples write them (sample-agent, cancellable-agent): a
// task snapshot first, a WORKING status with a note, the answer streamed as chunks of one artifact, then COMPLETED;
// cancelTask records the id and the loop checks it between chunks. Nothing in it knows about a2a-runtime.
import { appendFileSync } from "node:fs";
import { type Artifact, type Message, Role, type Task, TaskState } from "@a2a-js/sdk";
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from "@a2a-js/sdk/server";

export const STORY = ["Once ", "upon ", "a ", "time ", "a ", "queue ", "kept ", "every ", "task."];

function textPart(value: string) {
  return { content: { $case: "text" as const, value }, metadata: undefined, filename: "", mediaType: "text/plain" };
}

export class StoryAgentExecutor implements AgentExecutor {
  private readonly cancelledTasks = new Set<string>();

  public cancelTask = async (taskId: string, _eventBus: ExecutionEventBus): Promise<void> => {
    this.cancelledTasks.add(taskId);
    const log = process.env.TEST_SDK_CANCEL_LOG;
    if (log) appendFileSync(log, `${taskId}\n`);
  };

  async execute(requestContext: RequestContext, eventBus: ExecutionEventBus): Promise<void> {
    const userMessage = requestContext.userMessage;
    const taskId = requestContext.taskId;
    const contextId = requestContext.contextId;
    const query = userMessage.parts.find((part) => part.content?.$case === "text");
    const pauseMs = query?.content?.$case === "text" && query.content.value.includes("slowly") ? 400 : 20;
    try {
      const taskSnapshot: Task = requestContext.task ?? {
        id: taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_SUBMITTED, timestamp: new Date().toISOString(), message: undefined },
        artifacts: [],
        history: [userMessage],
        metadata: userMessage.metadata,
      };
      eventBus.publish(AgentEvent.task(taskSnapshot));

      const working: Message = {
        role: Role.ROLE_AGENT,
        messageId: crypto.randomUUID(),
        parts: [textPart("Writing a story")],
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
          status: { state: TaskState.TASK_STATE_WORKING, message: working, timestamp: new Date().toISOString() },
          metadata: {},
        }),
      );

      const artifactId = "story";
      for (const [index, words] of STORY.entries()) {
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
        if (this.cancelledTasks.has(taskId)) {
          eventBus.publish(
            AgentEvent.statusUpdate({
              taskId,
              contextId,
              status: { state: TaskState.TASK_STATE_CANCELED, timestamp: new Date().toISOString(), message: undefined },
              metadata: {},
            }),
          );
          return;
        }
        const chunk: Artifact = {
          artifactId,
          name: "Story",
          description: "A very short story.",
          parts: [textPart(words)],
          metadata: undefined,
          extensions: [],
        };
        eventBus.publish(
          AgentEvent.artifactUpdate({
            taskId,
            contextId,
            artifact: chunk,
            append: index > 0,
            lastChunk: index === STORY.length - 1,
            metadata: undefined,
          }),
        );
      }

      eventBus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: { state: TaskState.TASK_STATE_COMPLETED, timestamp: new Date().toISOString(), message: undefined },
          metadata: undefined,
        }),
      );
    } finally {
      this.cancelledTasks.delete(taskId);
    }
  }
}
