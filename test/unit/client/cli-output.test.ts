// What `send` and `task` show people: the stream view (terminal and plain), the final report with its exit code, and
// the one-line failure messages with their exit codes.
import { describe, expect, test } from "bun:test";
import { describeFailure, EXIT_CODES } from "../../../src/cli/client-failure.ts";
import { reportOutcome } from "../../../src/cli/send-report.ts";
import { StreamView, type ViewClock } from "../../../src/cli/send-view.ts";
import type { Terminal } from "../../../src/cli/terminal.ts";
import { ConnectionError, RpcError, TaskTracker } from "../../../src/client/index.ts";
import type { StreamResponse, Task } from "../../../src/protocol/index.ts";

function capture(tty = false): Terminal & { stdout: string; stderr: string } {
  const io = {
    stdout: "",
    stderr: "",
    tty,
    out(text: string) {
      io.stdout += text;
    },
    err(text: string) {
      io.stderr += text;
    },
    readInput: async () => undefined,
  };
  return io;
}

function manualClock(): ViewClock & { tick(): void; running: () => boolean } {
  let now = 0;
  let tick: (() => void) | undefined;
  return {
    now: () => now,
    every(_ms, fn) {
      tick = fn;
      return () => {
        tick = undefined;
      };
    },
    tick() {
      now += 100;
      tick?.();
    },
    running: () => tick !== undefined,
  };
}

const ids = { taskId: "t1", contextId: "c1" };
const EVENTS: StreamResponse[] = [
  { task: { id: "t1", contextId: "c1", status: { state: "TASK_STATE_SUBMITTED" } } },
  {
    statusUpdate: {
      ...ids,
      status: {
        state: "TASK_STATE_WORKING",
        message: { messageId: "s", role: "ROLE_AGENT", parts: [{ text: "thinking" }] },
      },
    },
  },
  { artifactUpdate: { ...ids, artifact: { artifactId: "a", parts: [{ text: "Hello, " }] } } },
  { artifactUpdate: { ...ids, artifact: { artifactId: "a", parts: [{ text: "world" }] }, append: true } },
  { statusUpdate: { ...ids, status: { state: "TASK_STATE_COMPLETED" } } },
];

function play(view: StreamView, events: readonly StreamResponse[], tracker = new TaskTracker()): TaskTracker {
  for (const event of events) {
    tracker.apply(event);
    view.event(event, tracker);
  }
  return tracker;
}

describe("StreamView", () => {
  test("plain: one stderr line per state change, the text on stdout as it grows", () => {
    const io = capture();
    const view = new StreamView(io, "plain");
    view.start();
    const tracker = play(view, EVENTS);
    view.finish();
    expect(io.stdout).toBe("Hello, world\n");
    expect(io.stderr).toBe("task t1 (context c1)\nsubmitted\nworking: thinking\ncompleted\n");
    expect(reportOutcome(io, { task: tracker.task }, view.textShown)).toBe(EXIT_CODES.ok);
    expect(io.stdout).toBe("Hello, world\n");
  });

  test("terminal: a spinner line on stderr until text arrives, then only the text; finish stops the spinner", () => {
    const io = capture(true);
    const clock = manualClock();
    const view = new StreamView(io, "tty", clock);
    view.start();
    play(view, EVENTS.slice(0, 2));
    clock.tick();
    expect(io.stderr).toContain("working: thinking · task t1 · 0.1 s");
    expect(io.stdout).toBe("");
    play(view, EVENTS.slice(2, 3));
    expect(clock.running()).toBe(false);
    expect(io.stderr.endsWith("\r\x1b[2K")).toBe(true);
    expect(io.stdout).toBe("Hello, ");
    view.finish();
    expect(io.stdout).toBe("Hello, \n");
  });

  test("json: one StreamResponse per line, nothing else", () => {
    const io = capture();
    const view = new StreamView(io, "json");
    play(view, EVENTS);
    view.finish();
    const lines = io.stdout.trim().split("\n");
    expect(lines.map((line) => Object.keys(JSON.parse(line))[0])).toEqual([
      "task",
      "statusUpdate",
      "artifactUpdate",
      "artifactUpdate",
      "statusUpdate",
    ]);
    expect(io.stderr).toBe("");
  });

  test("a repeated snapshot after a reconnect does not print the text twice", () => {
    const io = capture();
    const view = new StreamView(io, "plain");
    const tracker = play(view, EVENTS.slice(0, 4));
    play(
      view,
      [{ task: { ...(tracker.task as Task), artifacts: [{ artifactId: "a", parts: [{ text: "Hello, world!" }] }] } }],
      tracker,
    );
    view.finish();
    expect(io.stdout).toBe("Hello, world!\n");
  });
});

describe("reportOutcome", () => {
  const task = (state: Task["status"]["state"], said?: string): Task => ({
    id: "t9",
    contextId: "c9",
    status: {
      state,
      ...(said ? { message: { messageId: "m", role: "ROLE_AGENT" as const, parts: [{ text: said }] } } : {}),
    },
    artifacts: [{ artifactId: "r", parts: [{ text: "the answer" }] }],
  });

  test("completed prints the artifact text; exit 0", () => {
    const io = capture();
    expect(reportOutcome(io, { task: task("TASK_STATE_COMPLETED") })).toBe(0);
    expect([io.stdout, io.stderr]).toEqual(["the answer\n", ""]);
  });

  test("input required prints the question and how to answer; exit 3", () => {
    const io = capture();
    expect(reportOutcome(io, { task: task("TASK_STATE_INPUT_REQUIRED", "Which city?") })).toBe(3);
    expect(io.stdout).toBe("Which city?\n");
    expect(io.stderr).toContain('a2a-runtime send --task t9 "…"');
  });

  test("failed says so on stderr; exit 2. Still working: exit 4", () => {
    const io = capture();
    expect(reportOutcome(io, { task: task("TASK_STATE_FAILED", "boom") }, true)).toBe(2);
    expect(io.stderr).toBe("task t9 ended failed: boom\n");
    expect(io.stdout).toBe("");
    expect(reportOutcome(capture(), { task: task("TASK_STATE_WORKING") })).toBe(4);
  });
});

describe("describeFailure", () => {
  const rpc = (code: number, httpStatus: number, reason: string, extra: unknown[] = [], message = "m") =>
    new RpcError({
      method: "SendMessage",
      code,
      message,
      httpStatus,
      data: [
        { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason, ...(extra[0] as object) },
        ...extra.slice(1),
      ],
    });

  test("a refusal names its reason and the retry delay; exit 5", () => {
    const failure = describeFailure(
      rpc(
        -32000,
        503,
        "WORKER_UNAVAILABLE",
        [{}, { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "5s" }],
        "No worker",
      ),
      true,
    );
    expect(failure.line).toBe("refused: WORKER_UNAVAILABLE, retry after 5 s: No worker");
    expect(failure.code).toBe(EXIT_CODES.refused);
    expect(failure.json.error).toMatchObject({ code: -32000, reason: "WORKER_UNAVAILABLE", retryAfterSeconds: 5 });
  });

  test("401 hints at the key only when none was sent; exit 6", () => {
    const failure = describeFailure(rpc(-32000, 401, "UNAUTHENTICATED", [], "Missing credentials"), false);
    expect(failure.line).toBe(
      "not authenticated: UNAUTHENTICATED: Missing credentials (no API key was sent: pass --key or set A2A_API_KEY)",
    );
    expect(failure.code).toBe(EXIT_CODES.unauthorized);
    expect(describeFailure(rpc(-32000, 401, "UNAUTHENTICATED", [], "Invalid credentials"), true).line).toBe(
      "not authenticated: UNAUTHENTICATED: Invalid credentials",
    );
  });

  test("the blocking deadline names the task to follow; exit 4", () => {
    const failure = describeFailure(
      rpc(-32603, 504, "BLOCKING_DEADLINE_EXCEEDED", [{ metadata: { taskId: "t7" } }]),
      true,
    );
    expect(failure.line).toContain("a2a-runtime task get t7");
    expect(failure.code).toBe(EXIT_CODES.taskUnfinished);
  });

  test("other A2A errors show code and reason; exit 7. Unreachable: exit 8", () => {
    const notFound = describeFailure(rpc(-32001, 200, "TASK_NOT_FOUND", [], "Task not found"), true);
    expect(notFound.line).toBe("error -32001 TASK_NOT_FOUND: Task not found");
    expect(notFound.code).toBe(EXIT_CODES.rpcError);
    const down = describeFailure(
      new ConnectionError("http://x/a2a/echo", "cannot reach http://x/a2a/echo: refused"),
      true,
    );
    expect(down).toMatchObject({ line: "cannot reach http://x/a2a/echo: refused", code: EXIT_CODES.unreachable });
  });
});
