// `a2a-runtime send` as people and scripts run it: a real CLI child process against a real gateway on port 0, a real
// Redis, and a FakeActor moving the tasks. Blocking, --no-wait, --json, input-required, refusals, keys.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Harness, startHarness } from "../gateway/harness.ts";
import { runCli, startCli } from "./cli-runner.ts";

/** Each test runs a few CLI processes, about a second each on a busy machine. */
const TIMEOUT_MS = 30_000;

let h: Harness;
let url: string;

beforeAll(async () => {
  h = await startHarness();
  url = h.gateway.url;
  await h.actor.live();
}, TIMEOUT_MS);

afterAll(async () => {
  await h.stop();
});

/** A fresh client and the environment a CLI child of it runs with. */
async function user(): Promise<{ id: string; key: string; env: Record<string, string> }> {
  const { id, key } = await h.client();
  return { id, key, env: { ...h.env, A2A_API_KEY: key } };
}

describe("blocking send", () => {
  test(
    "prints the final artifact text, exit 0; the key and URL come from the environment and config",
    async () => {
      const { id, key, env } = await user();
      // No --url: server.publicUrl is derived from server.host and server.port, set here to the test gateway's.
      const run = startCli(["send", "hello", "there"], { ...env, A2A_SERVER_PORT: String(h.gateway.port) });
      const claim = await h.actor.takeOne({ clientId: id }, 10_000);
      const sent = await h.redis.hget(h.keys.task(0, claim.taskId), "hist");
      expect(sent).toContain("hello there");
      await h.actor.complete(claim, "hello back");
      const result = await run.done;
      expect(result).toEqual({ code: 0, stdout: "hello back\n", stderr: "" });
      expect(result.stdout + result.stderr).not.toContain(key);
    },
    TIMEOUT_MS,
  );

  test(
    "--json prints the final Task",
    async () => {
      const { id, env } = await user();
      const run = startCli(["send", "--url", url, "--json", "hi"], env);
      await h.actor.complete(await h.actor.takeOne({ clientId: id }, 10_000), "json answer");
      const result = await run.done;
      expect(result.code).toBe(0);
      const task = JSON.parse(result.stdout);
      expect(task.status.state).toBe("TASK_STATE_COMPLETED");
      expect(task.artifacts).toEqual([{ artifactId: "result", parts: [{ text: "json answer" }] }]);
      expect(typeof task.id).toBe("string");
    },
    TIMEOUT_MS,
  );

  test(
    "input required prints the question and how to answer (exit 3); --task answers it",
    async () => {
      const { id, env } = await user();
      const first = startCli(["send", "--url", url, "book a table"], env);
      const claim = await h.actor.takeOne({ clientId: id }, 10_000);
      await h.actor.move(claim, "TASK_STATE_INPUT_REQUIRED", { text: "For how many people?" });
      const asked = await first.done;
      expect(asked.code).toBe(3);
      expect(asked.stdout).toBe("For how many people?\n");
      expect(asked.stderr).toContain(`a2a-runtime send --task ${claim.taskId}`);

      const second = startCli(["send", "--url", url, "--task", claim.taskId, "four"], env);
      const resumed = await h.actor.takeOne({ taskId: claim.taskId }, 10_000);
      await h.actor.complete(resumed, "booked for four");
      expect(await second.done).toMatchObject({ code: 0, stdout: "booked for four\n" });
    },
    TIMEOUT_MS,
  );

  test(
    "a failed task: exit 2 and the reason on stderr",
    async () => {
      const { id, env } = await user();
      const run = startCli(["send", "--url", url, "break"], env);
      await h.actor.move(await h.actor.takeOne({ clientId: id }, 10_000), "TASK_STATE_FAILED", { text: "it broke" });
      const result = await run.done;
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/^task \S+ ended failed: it broke\n$/);
    },
    TIMEOUT_MS,
  );
});

describe("--no-wait", () => {
  test(
    "prints the task id at once; --json prints {taskId, contextId, state}",
    async () => {
      const { env } = await user();
      const [plain, json] = await Promise.all([
        runCli(["send", "--url", url, "--no-wait", "later"], env),
        runCli(["send", "--url", url, "--no-wait", "--json", "later"], env),
      ]);
      expect(plain.code).toBe(0);
      const taskId = plain.stdout.trim();
      expect(await h.redis.hget(h.keys.task(0, taskId), "state")).toBeString();
      expect(json.code).toBe(0);
      const body = JSON.parse(json.stdout);
      expect(body).toEqual({
        taskId: expect.any(String),
        contextId: expect.any(String),
        state: "TASK_STATE_SUBMITTED",
      });
    },
    TIMEOUT_MS,
  );
});

describe("failures", () => {
  test(
    "no live worker: refused with the reason and retry delay, exit 5, nothing stored",
    async () => {
      const idle = await startHarness({ server: h.server });
      try {
        const { key } = await idle.client();
        const run = await runCli(["send", "--url", idle.gateway.url, "hello"], { ...idle.env, A2A_API_KEY: key });
        expect(run.code).toBe(5);
        expect(run.stderr).toBe(
          "refused: WORKER_UNAVAILABLE, retry after 5 s: No worker is live to run this task; nothing was stored\n",
        );
        const json = await runCli(["send", "--url", idle.gateway.url, "--json", "hello"], {
          ...idle.env,
          A2A_API_KEY: key,
        });
        expect(JSON.parse(json.stdout).error).toMatchObject({
          code: -32000,
          reason: "WORKER_UNAVAILABLE",
          httpStatus: 503,
        });
        const stored = (await idle.redis.keys(`${idle.prefix}*`)).filter((key) =>
          /:(task|run|dedup|journal):/.test(key),
        );
        expect(stored).toEqual([]);
      } finally {
        await idle.stop();
      }
    },
    TIMEOUT_MS,
  );

  test(
    "a bad key: 401 explained, exit 6, the key never printed; no key: told how to give one",
    async () => {
      const [bad, none] = await Promise.all([
        runCli(["send", "--url", url, "--key", "not-a-real-key-4711", "hello"], h.env),
        runCli(["send", "--url", url, "hello"], h.env),
      ]);
      expect(bad.code).toBe(6);
      expect(bad.stderr).toBe("not authenticated: UNAUTHENTICATED: Invalid credentials\n");
      expect(bad.stdout + bad.stderr).not.toContain("not-a-real-key-4711");
      expect(none.code).toBe(6);
      expect(none.stderr).toContain("no API key was sent: pass --key or set A2A_API_KEY");
    },
    TIMEOUT_MS,
  );

  test(
    "nothing listening: exit 8 naming the endpoint; nothing to send: exit 1",
    async () => {
      const { env } = await user();
      const [down, empty] = await Promise.all([
        runCli(["send", "--url", "http://127.0.0.1:9", "hello"], env),
        runCli(["send", "--url", url], env),
      ]);
      expect(down.code).toBe(8);
      // Without --profile, send first reads the server's card to learn its first profile.
      expect(down.stderr).toStartWith("cannot reach http://127.0.0.1:9/.well-known/agent-card.json");
      expect(empty.code).toBe(1);
      expect(empty.stderr).toContain("nothing to send");
    },
    TIMEOUT_MS,
  );
});
