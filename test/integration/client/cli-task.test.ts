// `a2a-runtime task get|list|cancel` as real CLI child processes against a real gateway and Redis, tasks moved by a
// FakeActor: readable output, --json shapes, filters, exit codes, and another client's task looking like none.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Harness, startHarness } from "../gateway/harness.ts";
import { runCli } from "./cli-runner.ts";

/** Each test runs a few CLI processes, about a second each on a busy machine. */
const TIMEOUT_MS = 30_000;

let h: Harness;
let url: string;
let env: Record<string, string>;
let clientId: string;
let done: string;
let queued: string;

beforeAll(async () => {
  h = await startHarness();
  url = h.gateway.url;
  await h.actor.live();
  const { id, key } = await h.client();
  clientId = id;
  env = { ...h.env, A2A_API_KEY: key };
  // One completed task and one left queued, both sent with --no-wait.
  const [first, second] = await Promise.all([
    runCli(["send", "--url", url, "--no-wait", "finish me"], env),
    runCli(["send", "--url", url, "--no-wait", "leave me"], env),
  ]);
  done = first.stdout.trim();
  queued = second.stdout.trim();
  const claim = await h.actor.takeOne({ taskId: done }, 10_000);
  await h.actor.move(claim, "TASK_STATE_WORKING", { text: "on it" });
  await h.actor.complete(claim, "finished text");
}, TIMEOUT_MS);

afterAll(async () => {
  await h.stop();
});

describe("task get", () => {
  test(
    "shows state, artifact text and history; --json is the Task; --history caps it",
    async () => {
      const [plain, json, capped] = await Promise.all([
        runCli(["task", "get", done, "--url", url], env),
        runCli(["task", "get", done, "--url", url, "--json"], env),
        runCli(["task", "get", done, "--url", url, "--json", "--history", "0"], env),
      ]);
      expect(plain.code).toBe(0);
      expect(plain.stdout).toContain(`task      ${done}\n`);
      expect(plain.stdout).toMatch(/state {5}completed {2}\(\d{4}-\d\d-\d\dT[\d:.]+Z\)\n/);
      expect(plain.stdout).toContain("artifact  result\n  finished text\n");
      expect(plain.stdout).toContain("  user: finish me\n");
      const task = JSON.parse(json.stdout);
      expect(task).toMatchObject({ id: done, status: { state: "TASK_STATE_COMPLETED" } });
      expect(task.history.length).toBeGreaterThan(0);
      expect(JSON.parse(capped.stdout).history).toBeUndefined();
    },
    TIMEOUT_MS,
  );

  test(
    "an unknown id, or another client's task, is TASK_NOT_FOUND with exit 7",
    async () => {
      const other = await h.client({ name: "other" });
      const [unknown, foreign] = await Promise.all([
        runCli(["task", "get", "no-such-task", "--url", url], env),
        runCli(["task", "get", done, "--url", url, "--json"], { ...h.env, A2A_API_KEY: other.key }),
      ]);
      expect(unknown.code).toBe(7);
      expect(unknown.stderr).toBe("error -32001 TASK_NOT_FOUND: Task not found\n");
      expect(foreign.code).toBe(7);
      expect(JSON.parse(foreign.stdout).error).toMatchObject({ code: -32001, reason: "TASK_NOT_FOUND" });
    },
    TIMEOUT_MS,
  );
});

describe("task list", () => {
  test(
    "a table newest first; --state filters; --json is the ListTasks result",
    async () => {
      const [table, completed, json] = await Promise.all([
        runCli(["task", "list", "--url", url], env),
        runCli(["task", "list", "--url", url, "--state", "completed", "--json"], env),
        runCli(["task", "list", "--url", url, "--page-size", "1", "--json"], env),
      ]);
      expect(table.code).toBe(0);
      const rows = table.stdout.trim().split("\n");
      expect(rows[0]).toBe("id\tstate\tupdated\tcontext");
      expect(rows.slice(1).map((row) => row.split("\t").slice(0, 2))).toEqual([
        [done, "completed"],
        [queued, "submitted"],
      ]);
      expect(table.stderr).toBe("2 of 2 task(s)\n");
      expect(JSON.parse(completed.stdout).tasks.map((task: { id: string }) => task.id)).toEqual([done]);
      const page = JSON.parse(json.stdout);
      expect(page).toMatchObject({ pageSize: 1, totalSize: 2, tasks: [{ id: done }] });
      expect(page.nextPageToken).not.toBe("");
      const next = await runCli(["task", "list", "--url", url, "--page-token", page.nextPageToken, "--json"], env);
      expect(JSON.parse(next.stdout).tasks.map((task: { id: string }) => task.id)).toEqual([queued]);
    },
    TIMEOUT_MS,
  );

  test(
    "a bad --state or --page-size is a usage error",
    async () => {
      const [state, size] = await Promise.all([
        runCli(["task", "list", "--url", url, "--state", "running"], env),
        runCli(["task", "list", "--url", url, "--page-size", "101"], env),
      ]);
      expect(state.code).toBe(1);
      expect(state.stderr).toContain("must be one of submitted, working, input-required");
      expect(size.code).toBe(1);
      expect(size.stderr).toContain("must be a whole number from 1 to 100");
    },
    TIMEOUT_MS,
  );
});

describe("task cancel", () => {
  test(
    "a queued task is canceled (exit 0); a completed one is not cancelable (exit 7)",
    async () => {
      const canceled = await runCli(["task", "cancel", queued, "--url", url, "--json"], env);
      expect(canceled.code).toBe(0);
      expect(JSON.parse(canceled.stdout)).toMatchObject({ id: queued, status: { state: "TASK_STATE_CANCELED" } });
      const again = await runCli(["task", "cancel", queued, "--url", url], env);
      expect(again).toMatchObject({ code: 0, stdout: `task ${queued} canceled\n` });
      const finished = await runCli(["task", "cancel", done, "--url", url], env);
      expect(finished.code).toBe(7);
      expect(finished.stderr).toStartWith("error -32002 TASK_NOT_CANCELABLE");
      expect(await h.redis.hget(h.keys.task(0, queued), "cli")).toBe(clientId);
    },
    TIMEOUT_MS,
  );
});
