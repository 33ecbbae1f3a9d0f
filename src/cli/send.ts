// `a2a-runtime send`: sends text to a profile and shows the answer. Blocking SendMessage by default; --stream follows
// SendStreamingMessage (falling back to blocking when the agent does not stream); --no-wait prints the task id.
import { randomUUID } from "node:crypto";
import type { Command } from "commander";
import { type A2aClient, ConnectionError, RpcError, TaskTracker } from "../client/index.ts";
import type { Message, SendMessageRequest, StreamResponse } from "../protocol/index.ts";
import { type ConnectionOptions, connect, withConnectionOptions } from "./client-connection.ts";
import { describeFailure, EXIT_CODES, stateExitCode } from "./client-failure.ts";
import type { CliContext } from "./context.ts";
import { reportOutcome } from "./send-report.ts";
import { StreamView } from "./send-view.ts";
import { processTerminal, type Terminal } from "./terminal.ts";

export interface SendOptions extends ConnectionOptions {
  stream?: boolean;
  /** false with --no-wait. */
  wait: boolean;
  json?: boolean;
  context?: string;
  task?: string;
}

/** Exit code after Ctrl-C during a stream (128 + SIGINT). */
const INTERRUPTED = 130;
/** SubscribeToTask streams that end within this long without settling the task count as failed attempts. */
const QUICK_CLOSE_MS = 1000;
const MAX_QUICK_CLOSES = 3;

export function registerSend(program: Command, context: CliContext, terminal: () => Terminal = processTerminal): void {
  withConnectionOptions(
    program
      .command("send")
      .description("send text to an agent and print its answer (exit codes: see docs/client.md)")
      .argument("[text...]", "the message; read from standard input when none is given")
      .option("--stream", "follow the task as it runs (SendStreamingMessage) and show the text as it arrives")
      .option("--no-wait", "return at once and print the task id (returnImmediately)")
      .option(
        "--json",
        "machine-readable output: the final Task, {taskId} with --no-wait, one event per line with --stream",
      )
      .option("--context <id>", "continue a conversation: the contextId of an earlier task")
      .option("--task <id>", "answer a task that waits for input (INPUT_REQUIRED)"),
  ).action(async (words: string[], options: SendOptions) => {
    process.exitCode = await runSend(context, words, options, terminal());
  });
}

function userMessage(text: string, options: SendOptions): Message {
  return {
    messageId: randomUUID(),
    role: "ROLE_USER",
    parts: [{ text }],
    ...(options.context === undefined ? {} : { contextId: options.context }),
    ...(options.task === undefined ? {} : { taskId: options.task }),
  };
}

/** Runs one send and returns its exit code; every failure is reported on stderr (and as JSON with --json). */
export async function runSend(
  context: CliContext,
  words: string[],
  options: SendOptions,
  io: Terminal,
): Promise<number> {
  if (options.stream && !options.wait) {
    io.err("send: --stream and --no-wait exclude each other\n");
    return EXIT_CODES.usage;
  }
  const text = words.length > 0 ? words.join(" ") : ((await io.readInput()) ?? "");
  if (text.trim() === "") {
    io.err("send: nothing to send: give the text as arguments or on standard input\n");
    return EXIT_CODES.usage;
  }
  let hasKey = false;
  try {
    const connection = await connect(context, options);
    hasKey = connection.hasKey;
    const params: SendMessageRequest = { message: userMessage(text, options) };
    if (!options.wait) return await sendNoWait(connection.client, params, options, io);
    if (options.stream) return await sendStreaming(connection.client, params, options, io);
    return await sendBlocking(connection.client, params, options, io);
  } catch (error) {
    const failure = describeFailure(error, hasKey);
    if (options.json) io.out(`${JSON.stringify(failure.json)}\n`);
    io.err(`${failure.line}\n`);
    return failure.code;
  }
}

async function sendNoWait(client: A2aClient, params: SendMessageRequest, options: SendOptions, io: Terminal) {
  const answer = await client.sendMessage({ ...params, configuration: { returnImmediately: true } });
  if (!answer.task) return reportOutcome(io, { message: answer.message });
  const { id, contextId, status } = answer.task;
  io.out(options.json ? `${JSON.stringify({ taskId: id, contextId, state: status.state })}\n` : `${id}\n`);
  return EXIT_CODES.ok;
}

/** `asEvent`: print the --json answer as one stream event line (the fallback of --stream). */
async function sendBlocking(
  client: A2aClient,
  params: SendMessageRequest,
  options: SendOptions,
  io: Terminal,
  asEvent = false,
): Promise<number> {
  const answer = await client.sendMessage(params);
  if (options.json) {
    const body = asEvent ? answer : (answer.task ?? answer.message);
    io.out(`${JSON.stringify(body)}\n`);
    return answer.task ? stateExitCode(answer.task.status.state) : EXIT_CODES.ok;
  }
  return reportOutcome(io, answer);
}

/**
 * Applies each event of a stream. Returns the -32004 (UnsupportedOperationError) the server answered instead of a
 * stream, before any event; undefined when the stream ran and ended.
 */
async function follow(
  events: AsyncGenerator<StreamResponse>,
  onEvent: (event: StreamResponse) => void,
): Promise<RpcError | undefined> {
  let seen = 0;
  try {
    for await (const event of events) {
      seen++;
      onEvent(event);
    }
  } catch (error) {
    if (seen === 0 && error instanceof RpcError && error.code === -32004) return error;
    throw error;
  }
  return undefined;
}

async function sendStreaming(client: A2aClient, params: SendMessageRequest, options: SendOptions, io: Terminal) {
  const view = new StreamView(io, options.json ? "json" : io.tty ? "tty" : "plain");
  const tracker = new TaskTracker();
  const abort = new AbortController();
  const onSigint = () => abort.abort();
  process.once("SIGINT", onSigint);
  const apply = (event: StreamResponse) => {
    tracker.apply(event);
    view.event(event, tracker);
  };
  view.start();
  try {
    let refused: RpcError | undefined;
    try {
      refused = await follow(client.sendStreamingMessage(params, { signal: abort.signal }), apply);
    } catch (error) {
      // A stream that broke after the task was created is picked up again below.
      if (!(error instanceof ConnectionError) || tracker.task === undefined || abort.signal.aborted) throw error;
    }
    // -32004 naming a task refuses the message itself (e.g. to a terminal task); without one, streaming is not offered.
    if (refused?.metadata.taskId !== undefined) throw refused;
    if (refused) {
      view.finish();
      io.err("note: this agent does not stream (-32004); waiting for the answer instead\n");
      return await sendBlocking(client, params, options, io, true);
    }
    await resubscribe(client, tracker, apply, abort.signal);
  } catch (error) {
    if (!abort.signal.aborted) throw error;
    view.finish();
    const id = tracker.task?.id;
    io.err(
      `interrupted; ${id ? `task ${id} goes on: a2a-runtime task get ${id}` : "the task, if accepted, goes on"}\n`,
    );
    return INTERRUPTED;
  } finally {
    view.finish();
    process.off("SIGINT", onSigint);
  }
  if (options.json) return tracker.task ? stateExitCode(tracker.task.status.state) : EXIT_CODES.ok;
  return reportOutcome(io, { task: tracker.task, message: tracker.message }, view.textShown);
}

/**
 * A stream may close before the task settles (server.streamMaxSeconds, a proxy, a network break): subscribe again until
 * it settles, and fetch the task when subscribing no longer helps, so that the report shows its latest state.
 */
async function resubscribe(
  client: A2aClient,
  tracker: TaskTracker,
  apply: (event: StreamResponse) => void,
  signal: AbortSignal,
): Promise<void> {
  let quick = 0;
  while (!tracker.settled && tracker.task && quick < MAX_QUICK_CLOSES) {
    const id = tracker.task.id;
    const started = Date.now();
    try {
      // -32004: the task turned terminal meanwhile (or the agent does not stream): fetch it instead.
      if ((await follow(client.subscribeToTask({ id }, { signal }), apply)) !== undefined) break;
    } catch (error) {
      if (!(error instanceof ConnectionError) || signal.aborted) throw error;
    }
    quick = Date.now() - started < QUICK_CLOSE_MS ? quick + 1 : 0;
    if (quick > 0 && !tracker.settled) await new Promise((resolve) => setTimeout(resolve, 250 * quick));
  }
  if (!tracker.settled && tracker.task) apply({ task: await client.getTask({ id: tracker.task.id }, { signal }) });
}
