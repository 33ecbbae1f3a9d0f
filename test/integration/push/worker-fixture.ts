// Shared steps for the push worker tests: a config that allow-lists the receivers' loopback ports, a task whose run an
// "actor" drives through the ledger, push configs on it, and waiting for a receiver. Only loopback is ever connected to.
import type { Writable } from "node:stream";
import { type Config, loadConfig } from "../../../src/config/index.ts";
import { type Claim, PushConfigs, type TransitionResult } from "../../../src/journal/index.ts";
import { createLogger, type Logger } from "../../../src/log.ts";
import type { Artifact, TaskState } from "../../../src/protocol/index.ts";
import { PushWorker, type PushWorkerDeps } from "../../../src/push/index.ts";
import type { JournalFixture } from "../../support/journal.ts";
import { type AcceptedTask, acceptTask, claimTask, liveClient, PROFILE, RETENTION } from "../journal/helpers.ts";
import type { Received } from "./receiver.ts";

export const SECRET = "whsec_cHVzaC13b3JrZXItdGVzdC1zaWduaW5nLWtleQ==";
export const CREDENTIALS = "cred-very-secret-7f3a";
export const TOKEN = "tok-very-secret-91bc";

/** The allow-list entries of loopback receivers: 127.0.0.1 on each one's port, and on no other. */
export function allowListOf(receivers: readonly { port: number }[]): string {
  return receivers.map((receiver) => `127.0.0.1:${receiver.port}`).join(",");
}

/** A loaded config: the receivers' ports on 127.0.0.1 allow-listed, one signing secret, a 2 s timeout; `env` overrides. */
export function pushSettings(
  f: JournalFixture,
  receivers: readonly { port: number }[],
  env: Record<string, string> = {},
): Config {
  return loadConfig({
    env: {
      A2A_REDIS_KEY_PREFIX: f.prefix,
      A2A_PUSH_ALLOW_HOSTS: allowListOf(receivers),
      A2A_PUSH_SIGNING_SECRETS: SECRET,
      A2A_PUSH_TIMEOUT_SECONDS: "2",
      A2A_LOG_LEVEL: "error",
      ...env,
    },
  });
}

/**
 * A worker on its own Redis connection that may send to `receivers`; retries wait at most `backoffBaseMs` × 2^(n−1)
 * (random 0.5 of it).
 */
export function pushWorker(
  f: JournalFixture,
  newConnection: () => JournalFixture["redis"],
  receivers: readonly { port: number }[],
  extra: Partial<PushWorkerDeps> = {},
): PushWorker {
  return new PushWorker({
    redis: newConnection(),
    keys: f.keys,
    config: pushSettings(f, receivers),
    logger: createLogger("push-test", "error"),
    random: () => 0.5,
    backoffBaseMs: 100,
    ...extra,
  });
}

/** A logger whose JSON lines are collected in `lines`. */
export function capturingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = { write: (chunk: string) => lines.push(chunk) } as unknown as Writable;
  return { logger: createLogger("push-test", "debug", sink), lines };
}

/** A task of its own client with one push config per `urls` entry (ids c0, c1, …), credentials and token on each. */
export async function taskWithHooks(f: JournalFixture, urls: string[]): Promise<AcceptedTask> {
  const owner = await liveClient(f);
  const task = await acceptTask(f, owner);
  const configs = new PushConfigs(f.redis, f.keys);
  for (const [index, url] of urls.entries()) {
    const id = `c${index}`;
    const authentication = { scheme: "Bearer", credentials: CREDENTIALS };
    await configs.create(owner, PROFILE, { id, taskId: task.taskId, url, token: TOKEN, authentication }, 10);
  }
  return task;
}

/** A task's run driven as an actor would: one claim, then one transition per step (a state, or an artifact's text). */
export class ActorRun {
  private readonly artifacts: Artifact[] = [];
  private constructor(
    private readonly f: JournalFixture,
    private readonly task: AcceptedTask,
    private readonly claim: Claim,
  ) {}

  static async start(f: JournalFixture, task: AcceptedTask): Promise<ActorRun> {
    return new ActorRun(f, task, await claimTask(f, task));
  }

  async steps(...steps: string[]): Promise<void> {
    for (const step of steps) {
      const result = step.startsWith("TASK_STATE_") ? await this.status(step as TaskState) : await this.artifact(step);
      if (!result.ok) throw new Error(`step ${step} refused: ${result.reason}`);
    }
  }

  private status(state: TaskState): Promise<TransitionResult> {
    const { taskId, contextId } = this.task;
    return this.f.ledger.transition({
      claim: this.claim,
      kind: "status",
      state,
      status: { state, timestamp: new Date().toISOString() },
      event: { statusUpdate: { taskId, contextId, status: { state } } },
      ...RETENTION,
    });
  }

  private artifact(text: string): Promise<TransitionResult> {
    const { taskId, contextId } = this.task;
    const artifact: Artifact = { artifactId: `a${this.artifacts.length}`, parts: [{ text }] };
    this.artifacts.push(artifact);
    return this.f.ledger.transition({
      claim: this.claim,
      kind: "artifact",
      state: "TASK_STATE_WORKING",
      event: { artifactUpdate: { taskId, contextId, artifact } },
      artifacts: [...this.artifacts],
      ...RETENTION,
    });
  }
}

/** Claims the task's run and applies `steps` (see ActorRun). */
export async function runSteps(f: JournalFixture, task: AcceptedTask, steps: string[]): Promise<ActorRun> {
  const run = await ActorRun.start(f, task);
  await run.steps(...steps);
  return run;
}

/**
 * The run's events in the task journal, oldest first: every entry after the accept's snapshot (revision 1, written
 * before any config existed). Each config must receive exactly these, in this order.
 */
export async function runEvents(f: JournalFixture, task: AcceptedTask): Promise<{ rev: number; ev: string }[]> {
  const rows = await f.redis.xrange(f.keys.journal(f.keys.shardOf(task.clientId), task.taskId), "-", "+");
  const entries = rows.map(([, fields]) => ({
    rev: Number(fields[fields.indexOf("rev") + 1]),
    ev: fields[fields.indexOf("ev") + 1] ?? "",
  }));
  return entries.filter((entry) => entry.rev > 1);
}

/** Polls `check` every 20 ms until it holds; throws after `timeoutMs`. */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

/** The dead letters of shard 0 as objects (task, cfg, rev, id, reason). */
export async function deadLetters(f: JournalFixture): Promise<Record<string, string>[]> {
  const rows = await f.redis.xrange(f.keys.pushDead(0), "-", "+");
  return rows.map(([, fields]) => {
    const out: Record<string, string> = {};
    for (let i = 0; i + 1 < fields.length; i += 2) out[fields[i] as string] = fields[i + 1] as string;
    return out;
  });
}

/** The revision a received webhook is for (from its `webhook-id`, `<task>.<rev>.<config>`). */
export function revOf(request: Received): number {
  return Number(String(request.headers["webhook-id"]).split(".")[1]);
}
