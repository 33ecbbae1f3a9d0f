// GetTask, ListTasks, CancelTask and the methods served later, end to end over real HTTP against a real Redis, with
// the JSON shapes of the A2A 1.0 digest: the bare Task, ListTasks' four fields, error details.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { ListTasksResponseSchema, TaskSchema } from "../../../src/protocol/index.ts";
import { keysUnder } from "../../support/redis.ts";
import { errorInfo, eventually, type Harness, message, profile, rpc, startHarness } from "./harness.ts";

const taskShape = TypeCompiler.Compile(TaskSchema);
const listResponse = TypeCompiler.Compile(ListTasksResponseSchema);

const FORMS = profile("forms", {
  description: "Takes a booking form.",
  inputModes: ["text/plain", "application/json"],
  skill: { id: "book", name: "Book", description: "Books a trip.", tags: [], examples: ["Book Paris"] },
  inputSchema: {
    type: "object",
    properties: { city: { type: "string", minLength: 2 }, nights: { type: "integer", minimum: 1 } },
    required: ["city"],
  },
});

let h: Harness;
let key: string;

beforeAll(async () => {
  h = await startHarness({ profiles: [profile("echo"), FORMS] });
  await h.actor.live();
  key = (await h.client({ name: "alice" })).key;
});

afterAll(async () => {
  await h.stop();
});

async function immediate(text: string, extra: Record<string, unknown> = {}, profile = "echo") {
  const answer = await rpc(
    h.gateway.url,
    "SendMessage",
    { message: message(text, extra), configuration: { returnImmediately: true } },
    { key, profile },
  );
  expect(answer.status).toBe(200);
  return answer.body.result.task;
}

describe("GetTask", () => {
  test("answers the bare task; historyLength caps the history", async () => {
    const created = await immediate("get me");
    const answer = await rpc(h.gateway.url, "GetTask", { id: created.id }, { key });
    expect(answer.status).toBe(200);
    expect(taskShape.Check(answer.body.result)).toBe(true);
    expect(answer.body.result.id).toBe(created.id);
    expect(answer.body.result.status.state).toBe("TASK_STATE_SUBMITTED");
    expect("task" in answer.body.result).toBe(false);
    const none = await rpc(h.gateway.url, "GetTask", { id: created.id, historyLength: 0 }, { key });
    expect("history" in none.body.result).toBe(false);
  });

  test("an unknown id is -32001 with the task id in ErrorInfo", async () => {
    const answer = await rpc(h.gateway.url, "GetTask", { id: "no-such-task" }, { key });
    expect(answer.status).toBe(200);
    expect(answer.body.error).toEqual({
      code: -32001,
      message: "Task not found",
      data: [
        {
          "@type": "type.googleapis.com/google.rpc.ErrorInfo",
          reason: "TASK_NOT_FOUND",
          domain: "a2a-protocol.org",
          metadata: { taskId: "no-such-task" },
        },
      ],
    });
  });
});

describe("ListTasks", () => {
  test("a page ends before the task that would pass server.maxListBytes; its token goes on from there", async () => {
    const bounded = await startHarness({
      server: h.server,
      profiles: [profile("echo")],
      env: { A2A_SERVER_MAX_LIST_BYTES: "5000" },
    });
    try {
      await bounded.actor.live();
      const lister = (await bounded.client({ name: "large tasks" })).key;
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const answer = await rpc(
          bounded.gateway.url,
          "SendMessage",
          { message: message("z".repeat(3_000)), configuration: { returnImmediately: true } },
          { key: lister },
        );
        ids.push(answer.body.result.task.id);
        await Bun.sleep(3);
      }
      // each task's history holds a little over 3,000 bytes: one fits in 5,000, two do not
      const pages: string[][] = [];
      let pageToken = "";
      do {
        const answer = await rpc(bounded.gateway.url, "ListTasks", { pageSize: 10, pageToken }, { key: lister });
        expect(answer.status).toBe(200);
        expect(listResponse.Check(answer.body.result)).toBe(true);
        expect(answer.body.result.totalSize).toBe(3);
        pages.push(answer.body.result.tasks.map((task: { id: string }) => task.id));
        pageToken = answer.body.result.nextPageToken;
      } while (pageToken !== "" && pages.length < 5);
      expect(pages).toEqual([...ids].reverse().map((id) => [id]));
    } finally {
      await bounded.stop();
    }
  });

  test("newest first, paged by an opaque token, with totalSize; artifacts only when asked", async () => {
    const lister = (await h.client({ name: "lister" })).key;
    const send = async (text: string, contextId: string) =>
      (
        await rpc(
          h.gateway.url,
          "SendMessage",
          { message: message(text, { contextId }), configuration: { returnImmediately: true } },
          { key: lister },
        )
      ).body.result.task;
    const first = await send("one", "c1");
    await Bun.sleep(5);
    const second = await send("two", "c2");
    await Bun.sleep(5);
    const third = await send("three", "c1");
    await rpc(
      h.gateway.url,
      "SendMessage",
      { message: { ...message("x"), parts: [{ data: { city: "Oslo" } }] }, configuration: { returnImmediately: true } },
      { key: lister, profile: "forms" },
    );

    const all = await rpc(h.gateway.url, "ListTasks", {}, { key: lister });
    expect(listResponse.Check(all.body.result)).toBe(true);
    expect(all.body.result.tasks.map((t: { id: string }) => t.id)).toEqual([third.id, second.id, first.id]);
    expect(all.body.result).toMatchObject({ nextPageToken: "", pageSize: 50, totalSize: 3 });

    const page1 = await rpc(h.gateway.url, "ListTasks", { pageSize: 2 }, { key: lister });
    expect(page1.body.result.tasks.map((t: { id: string }) => t.id)).toEqual([third.id, second.id]);
    expect(page1.body.result.nextPageToken).not.toBe("");
    expect(page1.body.result.totalSize).toBe(3);
    const page2 = await rpc(
      h.gateway.url,
      "ListTasks",
      { pageSize: 2, pageToken: page1.body.result.nextPageToken },
      { key: lister },
    );
    expect(page2.body.result.tasks.map((t: { id: string }) => t.id)).toEqual([first.id]);
    expect(page2.body.result.nextPageToken).toBe("");

    const inContext = await rpc(h.gateway.url, "ListTasks", { contextId: "c1" }, { key: lister });
    expect(inContext.body.result.tasks.map((t: { id: string }) => t.id)).toEqual([third.id, first.id]);
    expect(inContext.body.result.totalSize).toBe(2);

    const since = await rpc(
      h.gateway.url,
      "ListTasks",
      { statusTimestampAfter: second.status.timestamp },
      { key: lister },
    );
    expect(since.body.result.tasks.map((t: { id: string }) => t.id)).toEqual([third.id, second.id]);

    const working = await rpc(h.gateway.url, "ListTasks", { status: "TASK_STATE_WORKING" }, { key: lister });
    expect(working.body.result).toEqual({ tasks: [], nextPageToken: "", pageSize: 50, totalSize: 0 });
  });

  test("includeArtifacts false omits the key; true includes the artifacts", async () => {
    const client = await h.client({ name: "artifacts" });
    const lister = client.key;
    const pending = rpc(h.gateway.url, "SendMessage", { message: message("art") }, { key: lister });
    const claim = await h.actor.takeOne({ clientId: client.id });
    await h.actor.complete(claim, "the artifact");
    await pending;
    const plain = await rpc(h.gateway.url, "ListTasks", {}, { key: lister });
    expect("artifacts" in plain.body.result.tasks[0]).toBe(false);
    const full = await rpc(h.gateway.url, "ListTasks", { includeArtifacts: true, historyLength: 0 }, { key: lister });
    expect(full.body.result.tasks[0].artifacts[0].parts[0].text).toBe("the artifact");
    expect("history" in full.body.result.tasks[0]).toBe(false);
  });

  test("includeArtifacts shows what a working task has streamed so far, as GetTask does", async () => {
    const client = await h.client({ name: "streamed" });
    const options = { key: client.key };
    const params = { message: message("stream"), configuration: { returnImmediately: true } };
    await rpc(h.gateway.url, "SendMessage", params, options);
    const claim = await h.actor.takeOne({ clientId: client.id });
    await h.actor.move(claim, "TASK_STATE_WORKING");
    await h.actor.stream(claim, { artifactId: "rows", parts: [{ data: { row: 1 } }] }, false);
    await h.actor.stream(claim, { artifactId: "text", parts: [{ text: "Hel" }] }, false);
    await h.actor.stream(claim, { artifactId: "rows", parts: [{ data: { row: 2 } }] }, true);
    await h.actor.stream(claim, { artifactId: "text", parts: [{ text: "lo" }] }, true);
    const got = (await rpc(h.gateway.url, "GetTask", { id: claim.taskId }, options)).body.result;
    expect(got.artifacts).toEqual([
      { artifactId: "rows", parts: [{ data: { row: 1 } }, { data: { row: 2 } }] },
      { artifactId: "text", parts: [{ text: "Hello" }] },
    ]);
    const listed = await rpc(h.gateway.url, "ListTasks", { includeArtifacts: true }, options);
    expect(listed.body.result.tasks).toEqual([got]);
    const { artifacts: _, ...withoutArtifacts } = got;
    const plain = await rpc(h.gateway.url, "ListTasks", {}, options);
    expect(plain.body.result.tasks).toEqual([withoutArtifacts]);
    expect("artifacts" in plain.body.result.tasks[0]).toBe(false);
  });

  test("a bad page token and an out-of-range pageSize are -32602", async () => {
    const token = await rpc(h.gateway.url, "ListTasks", { pageToken: "garbage!" }, { key });
    expect(token.body.error.code).toBe(-32602);
    const size = await rpc(h.gateway.url, "ListTasks", { pageSize: 101 }, { key });
    expect(size.body.error.code).toBe(-32602);
    expect(size.body.error.data[1].fieldViolations[0].field).toBe("pageSize");
  });
});

describe("CancelTask", () => {
  test("a queued task is canceled at once and the bare task returned; a repeat returns it again", async () => {
    const created = await immediate("cancel me");
    const answer = await rpc(h.gateway.url, "CancelTask", { id: created.id }, { key });
    expect(taskShape.Check(answer.body.result)).toBe(true);
    expect(answer.body.result.status.state).toBe("TASK_STATE_CANCELED");
    const again = await rpc(h.gateway.url, "CancelTask", { id: created.id }, { key });
    expect(again.body.result.status.state).toBe("TASK_STATE_CANCELED");
    // the queue entry of the canceled run is left to actors, which find the task terminal
    expect(await h.actor.take(1, { taskId: created.id }, 300)).toEqual([]);
  });

  test("a running task is canceled by its actor; the answer waits for it", async () => {
    const created = await immediate("long run");
    const claim = await h.actor.takeOne({ taskId: created.id });
    await h.actor.move(claim, "TASK_STATE_WORKING");
    const pending = rpc(h.gateway.url, "CancelTask", { id: created.id }, { key });
    await eventually(async () => (await h.redis.hget(h.keys.run(0, created.id), "cancel")) === "1");
    await h.actor.move(claim, "TASK_STATE_CANCELED");
    const answer = await pending;
    expect(answer.body.result.status.state).toBe("TASK_STATE_CANCELED");
  });

  test("a completed task is -32002", async () => {
    const dave = await h.client({ name: "dave" });
    const pending = rpc(h.gateway.url, "SendMessage", { message: message("done soon") }, { key: dave.key });
    await h.actor.complete(await h.actor.takeOne({ clientId: dave.id }));
    const task = (await pending).body.result.task;
    const answer = await rpc(h.gateway.url, "CancelTask", { id: task.id }, { key: dave.key });
    expect(answer.body.error.code).toBe(-32002);
    expect(errorInfo(answer)).toMatchObject({ reason: "TASK_NOT_CANCELABLE", metadata: { taskId: task.id } });
  });
});

describe("methods served later", () => {
  // Push notification configs are served now: test/integration/push/config-methods.test.ts covers them and their -32003.
  test("the extended card -32004; nothing is stored", async () => {
    const before = await keysUnder(h.redis, h.prefix);
    const calls: [string, unknown, number][] = [["GetExtendedAgentCard", undefined, -32004]];
    for (const [method, params, code] of calls) {
      const answer = await rpc(h.gateway.url, method, params, { key });
      expect(answer.status).toBe(200);
      expect(answer.body.error.code).toBe(code);
      expect(errorInfo(answer).domain).toBe("a2a-protocol.org");
    }
    expect(await keysUnder(h.redis, h.prefix)).toEqual(before);
  });
});
