// `a2a-runtime start` from a new user's point of view: no Redis answers, so it starts its own; it prints an endpoint
// and a demo key; a blocking SendMessage with that key comes back completed by a real actor; SIGTERM stops it all.
import { expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../support/redis.ts";

const root = join(import.meta.dir, "../../..");

test("start brings up Redis, the gateway and actors, prints a demo key that works, and stops on SIGTERM", async () => {
  const deadPort = await freePort();
  const child = spawn(process.execPath, [join(root, "src/cli.ts"), "start", "--port", "0", "--actors", "1"], {
    cwd: mkdtempSync(join(tmpdir(), "a2a-start-")),
    env: { ...process.env, REDIS_URL: `redis://127.0.0.1:${deadPort}`, A2A_LOG_LEVEL: "warn", A2A_CONFIG: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr.on("data", () => {});
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  try {
    const deadline = Date.now() + 20_000;
    while (!/demo client key/.test(out) && Date.now() < deadline) await Bun.sleep(100);
    expect(out).toContain("started an embedded redis-server");
    const url = /serving on (http:\/\/\S+)/.exec(out)?.[1];
    const key = /demo client key \(shown once\): (\S+)/.exec(out)?.[1];
    const redisUrl = /embedded redis-server at (\S+)/.exec(out)?.[1];
    expect(url).toBeDefined();
    expect(key).toMatch(/^a2a_/);

    const response = await fetch(`${url}/a2a/echo`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "a2a-version": "1.0", "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "SendMessage",
        params: { message: { messageId: "m-1", role: "ROLE_USER", parts: [{ text: "hello there" }] } },
      }),
    });
    const answer = (await response.json()) as {
      result?: { task?: { status: { state: string }; artifacts?: { parts: { text?: string }[] }[] } };
    };
    expect(answer.result?.task?.status.state).toBe("TASK_STATE_COMPLETED");
    expect(answer.result?.task?.artifacts?.[0]?.parts[0]?.text).toBe("hello there");

    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    const port = Number(new URL(redisUrl ?? "redis://x:1").port);
    const probe = await fetch(`http://127.0.0.1:${port}`).then(
      () => "open",
      () => "closed",
    );
    expect(probe).toBe("closed");
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
  }
}, 60_000);
