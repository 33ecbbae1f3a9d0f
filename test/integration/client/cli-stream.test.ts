// `a2a-runtime send --stream` as a real CLI child process against a real gateway and Redis, with a FakeActor writing
// status and artifact chunks: --json event lines, plain progress lines, the fallback for an agent that does not stream,
// and subscribing again when the gateway closes a stream before the task settles.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Harness, profile, startHarness } from "../gateway/harness.ts";
import { emitChunks } from "../streams/helpers.ts";
import { startCli } from "./cli-runner.ts";

/** Each test runs a CLI process, about a second on a busy machine. */
const TIMEOUT_MS = 30_000;

let h: Harness;
let url: string;

beforeAll(async () => {
  h = await startHarness({ profiles: [profile("echo"), profile("quiet", { streaming: false })] });
  url = h.gateway.url;
  await h.actor.live();
}, TIMEOUT_MS);

afterAll(async () => {
  await h.stop();
});

async function user(): Promise<{ id: string; env: Record<string, string> }> {
  const { id, key } = await h.client();
  return { id, env: { ...h.env, A2A_API_KEY: key } };
}

describe("--stream", () => {
  test(
    "--json prints one StreamResponse per line: the task first, then the updates as they happen",
    async () => {
      const { id, env } = await user();
      const run = startCli(["send", "--url", url, "--stream", "--json", "stream please"], env);
      const claim = await h.actor.takeOne({ clientId: id }, 10_000);
      await run.waitFor('{"task":');
      await h.actor.move(claim, "TASK_STATE_WORKING", { text: "thinking" });
      await emitChunks(h, claim, 2, { artifactId: "answer", text: (i) => ["Hel", "lo"][i] ?? "" });
      await h.actor.move(claim, "TASK_STATE_COMPLETED");
      const result = await run.done;
      expect(result.code).toBe(0);
      const events = result.stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line));
      expect(events.map((event) => Object.keys(event)[0])).toEqual([
        "task",
        "statusUpdate",
        "artifactUpdate",
        "artifactUpdate",
        "statusUpdate",
      ]);
      expect(events[0].task.id).toBe(claim.taskId);
      expect(events[1].statusUpdate.status.state).toBe("TASK_STATE_WORKING");
      expect(events[3].artifactUpdate).toMatchObject({
        append: true,
        lastChunk: true,
        artifact: { parts: [{ text: "lo" }] },
      });
      expect(events[4].statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
    },
    TIMEOUT_MS,
  );

  test(
    "without a terminal: state lines on stderr, the text on stdout as it arrives",
    async () => {
      const { id, env } = await user();
      const run = startCli(["send", "--url", url, "--stream", "stream please"], env);
      const claim = await h.actor.takeOne({ clientId: id }, 10_000);
      await run.waitFor("submitted");
      await h.actor.move(claim, "TASK_STATE_WORKING", { text: "thinking" });
      await emitChunks(h, claim, 3, { text: (i) => ["Hello", ", ", "world"][i] ?? "" });
      await run.waitFor("Hello, world");
      await h.actor.move(claim, "TASK_STATE_COMPLETED");
      const result = await run.done;
      expect(result.code).toBe(0);
      expect(result.stdout).toBe("Hello, world\n");
      expect(result.stderr).toBe(
        `task ${claim.taskId} (context ${await contextOf(claim.taskId)})\nsubmitted\nworking: thinking\ncompleted\n`,
      );
    },
    TIMEOUT_MS,
  );

  test(
    "an agent that does not stream: a note, then the blocking answer",
    async () => {
      const { id, env } = await user();
      const run = startCli(["send", "--url", url, "--profile", "quiet", "--stream", "hi"], env);
      await h.actor.complete(await h.actor.takeOne({ clientId: id }, 10_000), "quiet answer");
      const result = await run.done;
      expect(result.code).toBe(0);
      expect(result.stdout).toBe("quiet answer\n");
      expect(result.stderr).toBe("note: this agent does not stream (-32004); waiting for the answer instead\n");
    },
    TIMEOUT_MS,
  );
});

describe("--stream refusals", () => {
  test(
    "a message to a finished task is refused as such (exit 7), not taken for an agent that does not stream",
    async () => {
      const { id, env } = await user();
      const first = startCli(["send", "--url", url, "first"], env);
      const claim = await h.actor.takeOne({ clientId: id }, 10_000);
      await h.actor.complete(claim, "first answer");
      expect((await first.done).code).toBe(0);
      const result = await startCli(["send", "--url", url, "--stream", "--task", claim.taskId, "more"], env).done;
      expect(result.code).toBe(7);
      expect(result.stderr).toBe(
        "error -32004 UNSUPPORTED_OPERATION: The task is in a terminal state and accepts no further messages\n",
      );
    },
    TIMEOUT_MS,
  );
});

describe("--stream across a stream's end", () => {
  test(
    "when the gateway closes the stream early (server.streamMaxSeconds) the CLI subscribes again",
    async () => {
      const short = await startHarness({ server: h.server, env: { A2A_SERVER_STREAM_MAX_SECONDS: "1" } });
      try {
        await short.actor.live();
        const { id, key } = await short.client();
        const run = startCli(["send", "--url", short.gateway.url, "--stream", "take your time"], {
          ...short.env,
          A2A_API_KEY: key,
        });
        const claim = await short.actor.takeOne({ clientId: id }, 10_000);
        await short.actor.move(claim, "TASK_STATE_WORKING", { text: "slow" });
        await emitChunks(short, claim, 2, {
          text: (i) => ["first half, ", "second half"][i] ?? "",
          after: async (i) => {
            if (i > 0) return;
            await run.waitFor("first half, ");
            await Bun.sleep(1500);
          },
        });
        await short.actor.move(claim, "TASK_STATE_COMPLETED");
        const result = await run.done;
        expect(result.code).toBe(0);
        // The second stream starts with a snapshot holding the first half again: it is not printed twice.
        expect(result.stdout).toBe("first half, second half\n");
      } finally {
        await short.stop();
      }
    },
    TIMEOUT_MS,
  );
});

async function contextOf(taskId: string): Promise<string> {
  return (await h.redis.hget(h.keys.task(0, taskId), "ctx")) ?? "";
}
