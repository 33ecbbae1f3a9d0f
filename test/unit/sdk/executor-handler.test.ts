// fromAgentExecutor's mapping of what an executor publishes, against a recording handler context: a direct Message
// reply, a FAILED status, a thrown error, events after the closing state, and a cancel reaching cancelTask.
import { expect, test } from "bun:test";
import { Role, TaskState } from "@a2a-js/sdk";
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from "@a2a-js/sdk/server";
import { type HandlerContext, HandlerFailure, RunAbortedError } from "../../../src/actors/index.ts";
import { fromAgentExecutor } from "../../../src/sdk/index.ts";

function recordingContext(signal = new AbortController().signal) {
  const written: string[] = [];
  const ctx = {
    taskId: "t1",
    contextId: "c1",
    messages: [{ messageId: "m1", role: "ROLE_USER", parts: [{ text: "hi" }] }],
    input: { messageId: "m1", role: "ROLE_USER", parts: [{ text: "hi" }] },
    signal,
    emit: {
      text: async (delta: string) => void written.push(`text:${delta}`),
      artifact: async (artifact: { artifactId: string }) => void written.push(`artifact:${artifact.artifactId}`),
      progress: async (message: string) => void written.push(`progress:${message}`),
    },
  } as unknown as HandlerContext;
  return { ctx, written };
}

function executor(execute: (rc: RequestContext, bus: ExecutionEventBus) => Promise<void>, cancels: string[] = []) {
  return { execute, cancelTask: async (taskId: string) => void cancels.push(taskId) } satisfies AgentExecutor;
}

const text = (value: string) => ({
  content: { $case: "text" as const, value },
  metadata: undefined,
  filename: "",
  mediaType: "",
});
const status = (rc: RequestContext, state: TaskState, words?: string) =>
  AgentEvent.statusUpdate({
    taskId: rc.taskId,
    contextId: rc.contextId,
    status: {
      state,
      timestamp: undefined,
      message: words
        ? {
            role: Role.ROLE_AGENT,
            messageId: "a",
            parts: [text(words)],
            taskId: "",
            contextId: "",
            extensions: [],
            metadata: undefined,
            referenceTaskIds: [],
          }
        : undefined,
    },
    metadata: undefined,
  });

test("a direct Message reply is the answer's text and completes the leg; later events are not written", async () => {
  const { ctx, written } = recordingContext();
  const handler = fromAgentExecutor(
    "x",
    executor(async (rc, bus) => {
      expect(rc.userMessage.taskId).toBe("t1");
      expect(rc.task).toBeUndefined();
      bus.publish(
        AgentEvent.message({
          role: Role.ROLE_AGENT,
          messageId: "r",
          parts: [text("hello")],
          taskId: "",
          contextId: "",
          extensions: [],
          metadata: undefined,
          referenceTaskIds: [],
        }),
      );
      bus.publish(status(rc, TaskState.TASK_STATE_WORKING, "too late"));
    }),
  );
  expect(await handler.run(ctx)).toBeUndefined();
  expect(written).toEqual(["text:hello"]);
});

test("FAILED with a message is a HandlerFailure carrying it; a WORKING note before it is progress", async () => {
  const { ctx, written } = recordingContext();
  const handler = fromAgentExecutor(
    "x",
    executor(async (rc, bus) => {
      bus.publish(status(rc, TaskState.TASK_STATE_WORKING, "looking"));
      bus.publish(status(rc, TaskState.TASK_STATE_FAILED, "No forecast for Atlantis"));
    }),
  );
  const failure = await handler.run(ctx).catch((error: unknown) => error);
  expect(failure).toBeInstanceOf(HandlerFailure);
  expect((failure as Error).message).toBe("No forecast for Atlantis");
  expect(written).toEqual(["progress:looking"]);
});

test("an error thrown by execute is passed on (the runtime fails the task with the generic reason)", async () => {
  const { ctx } = recordingContext();
  const boom = new Error("database down");
  const handler = fromAgentExecutor(
    "x",
    executor(async () => {
      throw boom;
    }),
  );
  expect(await handler.run(ctx).catch((error: unknown) => error)).toBe(boom);
});

test("an abort calls cancelTask and ends the leg with the abort's reason, even if the executor never returns", async () => {
  const abort = new AbortController();
  const { ctx } = recordingContext(abort.signal);
  const cancels: string[] = [];
  const handler = fromAgentExecutor(
    "x",
    executor(() => new Promise<void>(() => {}), cancels),
  );
  const running = handler.run(ctx).catch((error: unknown) => error);
  abort.abort(new RunAbortedError("cancel"));
  expect(cancels).toEqual(["t1"]);
  const ended = await running;
  expect(ended).toBeInstanceOf(RunAbortedError);
});
