// `a2a-runtime task get|list|cancel`: the caller's tasks in one profile, through the gateway (GetTask, ListTasks,
// CancelTask). Readable text by default, the A2A JSON with --json; exit codes as for `send`.
import { type Command, InvalidArgumentError } from "commander";
import { type A2aClient, stateLabel } from "../client/index.ts";
import type { ListTasksRequest } from "../protocol/index.ts";
import { isTerminal, TASK_STATES, type TaskState } from "../protocol/index.ts";
import { type ConnectionOptions, connect, withConnectionOptions } from "./client-connection.ts";
import { describeFailure, EXIT_CODES } from "./client-failure.ts";
import type { CliContext } from "./context.ts";
import { formatTask, formatTaskRow, TASK_ROW_HEADER } from "./task-format.ts";
import { processTerminal, type Terminal } from "./terminal.ts";

interface CommonOptions extends ConnectionOptions {
  json?: boolean;
}

function integerIn(min: number, max: number): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
      throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}`);
    return Number(value);
  };
}

/** "completed", "input-required", "INPUT_REQUIRED" or "TASK_STATE_INPUT_REQUIRED" → the wire value. */
export function parseState(value: string): TaskState {
  const wanted = `TASK_STATE_${value
    .trim()
    .toUpperCase()
    .replace(/^TASK_STATE_/, "")
    .replace(/[- ]/g, "_")}`;
  const state = TASK_STATES.find((candidate) => candidate === wanted);
  if (!state) {
    const names = TASK_STATES.map((s) =>
      s
        .replace(/^TASK_STATE_/, "")
        .toLowerCase()
        .replaceAll("_", "-"),
    );
    throw new InvalidArgumentError(`must be one of ${names.join(", ")}`);
  }
  return state;
}

/** Runs `action` with a client; reports a failure on stderr (and as JSON with --json) and returns its exit code. */
async function withClient(
  context: CliContext,
  options: CommonOptions,
  io: Terminal,
  action: (client: A2aClient) => Promise<number>,
): Promise<number> {
  let hasKey = false;
  try {
    const connection = await connect(context, options);
    hasKey = connection.hasKey;
    return await action(connection.client);
  } catch (error) {
    const failure = describeFailure(error, hasKey);
    if (options.json) io.out(`${JSON.stringify(failure.json)}\n`);
    io.err(`${failure.line}\n`);
    return failure.code;
  }
}

export function registerTask(program: Command, context: CliContext, terminal: () => Terminal = processTerminal): void {
  const task = program
    .command("task")
    .description("look at and cancel your tasks in a profile (GetTask, ListTasks, CancelTask)");

  withConnectionOptions(
    task
      .command("get <id>")
      .description("show one task: state, status message, artifacts and history")
      .option("--history <n>", "at most this many history messages (default: all the server keeps)", integerIn(0, 1000))
      .option("--json", "print the Task as JSON"),
  ).action(async (id: string, options: CommonOptions & { history?: number }) => {
    const io = terminal();
    process.exitCode = await withClient(context, options, io, async (client) => {
      const found = await client.getTask({
        id,
        ...(options.history === undefined ? {} : { historyLength: options.history }),
      });
      io.out(options.json ? `${JSON.stringify(found)}\n` : formatTask(found));
      return EXIT_CODES.ok;
    });
  });

  withConnectionOptions(
    task
      .command("list")
      .description("list your tasks in the profile, newest status first")
      .option("--context <id>", "only the tasks of this contextId")
      .option("--state <state>", "only tasks in this state (completed, working, input-required, …)", parseState)
      .option("--page-size <n>", "tasks per page, 1 to 100 (default 50)", integerIn(1, 100))
      .option("--page-token <token>", "the next page, as a previous list printed it")
      .option("--json", "print the ListTasks result as JSON"),
  ).action(
    async (options: CommonOptions & { context?: string; state?: TaskState; pageSize?: number; pageToken?: string }) => {
      const io = terminal();
      process.exitCode = await withClient(context, options, io, async (client) => {
        const params: ListTasksRequest = {};
        if (options.context !== undefined) params.contextId = options.context;
        if (options.state !== undefined) params.status = options.state;
        if (options.pageSize !== undefined) params.pageSize = options.pageSize;
        if (options.pageToken !== undefined) params.pageToken = options.pageToken;
        const page = await client.listTasks(params);
        if (options.json) {
          io.out(`${JSON.stringify(page)}\n`);
          return EXIT_CODES.ok;
        }
        io.out(`${TASK_ROW_HEADER}\n`);
        for (const found of page.tasks) io.out(`${formatTaskRow(found)}\n`);
        io.err(`${page.tasks.length} of ${page.totalSize} task(s)\n`);
        if (page.nextPageToken) io.err(`more: a2a-runtime task list --page-token ${page.nextPageToken}\n`);
        return EXIT_CODES.ok;
      });
    },
  );

  withConnectionOptions(
    task
      .command("cancel <id>")
      .description("cancel a task; exit code 4 when it is still running after the gateway's short wait")
      .option("--json", "print the Task as JSON"),
  ).action(async (id: string, options: CommonOptions) => {
    const io = terminal();
    process.exitCode = await withClient(context, options, io, async (client) => {
      const canceled = await client.cancelTask({ id });
      const state = canceled.status.state;
      const label = stateLabel(state);
      if (options.json) io.out(`${JSON.stringify(canceled)}\n`);
      else if (state === "TASK_STATE_CANCELED") io.out(`task ${id} canceled\n`);
      else if (isTerminal(state)) io.out(`task ${id} ended ${label} before the cancel took effect\n`);
      else io.out(`cancel requested; task ${id} is still ${label}\n`);
      if (state === "TASK_STATE_CANCELED") return EXIT_CODES.ok;
      // A task that ended otherwise is as not cancelable as -32002 says; one still running may stop soon.
      return isTerminal(state) ? EXIT_CODES.rpcError : EXIT_CODES.taskUnfinished;
    });
  });
}
