// `a2a-runtime start` from a new user's point of view: no Redis answers, so it starts its own; it prints an endpoint
// and a demo key; a blocking SendMessage with that key comes back completed by a real actor; SIGTERM stops it all.
// Runs that crash their actor, more than the restart intensity, leave the installation serving.
import { expect, test } from "bun:test";
import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "../../support/redis.ts";
import { tempDir } from "../../support/temp-dir.ts";

const root = join(import.meta.dir, "../../..");

interface Started {
  child: ChildProcess;
  /** Everything it printed on stdout so far. */
  out(): string;
  exited: Promise<number | null>;
  url: string;
  key: string;
}

/** Runs `start --port 0 --actors 1` in `cwd` with a Redis URL where nothing answers, until it prints its demo key. */
async function startInstallation(cwd: string, env: Record<string, string>): Promise<Started> {
  const deadPort = await freePort();
  const child = spawn(process.execPath, [join(root, "src/cli.ts"), "start", "--port", "0", "--actors", "1"], {
    cwd,
    env: { ...process.env, REDIS_URL: `redis://127.0.0.1:${deadPort}`, A2A_LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr?.on("data", () => {});
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const deadline = Date.now() + 20_000;
  while (!/demo client key/.test(out) && Date.now() < deadline) await Bun.sleep(100);
  const url = /serving on (http:\/\/\S+)/.exec(out)?.[1] ?? "";
  const key = /demo client key \(shown once\): (\S+)/.exec(out)?.[1] ?? "";
  return { child, out: () => out, exited, url, key };
}

type Answer = {
  result?: {
    id?: string;
    status?: { state: string };
    task?: { id: string; status: { state: string }; artifacts?: { parts: { text?: string }[] }[] };
  };
};

/** One JSON-RPC call over HTTP with the demo key. */
async function call(started: Started, profile: string, method: string, params: unknown): Promise<Answer> {
  const response = await fetch(`${started.url}/a2a/${profile}`, {
    method: "POST",
    headers: { authorization: `Bearer ${started.key}`, "a2a-version": "1.0", "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return (await response.json()) as Answer;
}

const say = (messageId: string, text: string) => ({ message: { messageId, role: "ROLE_USER", parts: [{ text }] } });

test("start brings up Redis, the gateway and actors, prints a demo key that works, and stops on SIGTERM", async () => {
  const started = await startInstallation(tempDir("a2a-start-"), { A2A_CONFIG: "" });
  const { child, exited } = started;
  try {
    expect(started.out()).toContain("started an embedded redis-server");
    const redisUrl = /embedded redis-server at (\S+)/.exec(started.out())?.[1];
    expect(started.url).not.toBe("");
    expect(started.key).toMatch(/^a2a_/);

    const answer = await call(started, "echo", "SendMessage", say("m-1", "hello there"));
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

test("under start, runs that crash their actor past the restart intensity leave the gateway serving", async () => {
  const cwd = tempDir("a2a-start-");
  const profile = (name: string) => ({
    name,
    handler: name,
    description: name,
    skill: { id: name, name, description: name },
  });
  const config = join(cwd, "config.json");
  writeFileSync(config, JSON.stringify({ profiles: [profile("echo"), profile("faults")] }));
  const started = await startInstallation(cwd, {
    A2A_CONFIG: config,
    A2A_WORKER_RESTART_INTENSITY: "1",
    A2A_WORKER_MAX_ATTEMPTS: "1",
    A2A_WORKER_LEASE_SECONDS: "2",
    A2A_WORKER_RECLAIM_INTERVAL_SECONDS: "1",
    A2A_WORKER_HEARTBEAT_SECONDS: "1",
    A2A_WORKER_LIVENESS_SECONDS: "5",
  });
  const { child, exited } = started;
  try {
    expect(started.url).not.toBe("");
    // Three crashes, each killing the only actor: more than the intensity of 1.
    const ids: string[] = [];
    for (const n of [1, 2, 3]) {
      const sent = await call(started, "faults", "SendMessage", {
        ...say(`crash-${n}`, `[crash] ${n}`),
        configuration: { returnImmediately: true },
      });
      ids.push(sent.result?.task?.id ?? "");
    }
    for (const id of ids) {
      const end = Date.now() + 40_000;
      let state = "";
      while (state !== "TASK_STATE_FAILED" && Date.now() < end) {
        state = (await call(started, "faults", "GetTask", { id })).result?.status?.state ?? "";
        if (state !== "TASK_STATE_FAILED") await Bun.sleep(100);
      }
      expect(state).toBe("TASK_STATE_FAILED");
    }

    expect(child.exitCode).toBeNull();
    const echoed = await call(started, "echo", "SendMessage", say("after", "still serving"));
    expect(echoed.result?.task?.status.state).toBe("TASK_STATE_COMPLETED");
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
  }
}, 90_000);
