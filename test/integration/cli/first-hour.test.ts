// The traps of a first hour with a2a-runtime, each as a new user meets it: a second gateway on a busy port, what
// `start` binds and says, whose demo key a second `start` revokes, a Redis that is down, a mistyped A2A_* variable,
// a handler module that does not load, a profile whose handler nobody registers.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, startRedis, type TestRedis, testPrefix } from "../../support/redis.ts";
import { tempDir } from "../../support/temp-dir.ts";

const CLI = join(import.meta.dir, "../../../src/cli.ts");

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
});

interface Run {
  child: ChildProcess;
  out(): string;
  exited: Promise<number | null>;
  /** Resolves with stdout+stderr once `pattern` appears in it. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
}

function cli(args: string[], env: Record<string, string>, cwd = tmpdir()): Run {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd,
    env: { ...process.env, A2A_LOG_LEVEL: "warn", A2A_WORKER_METRICS_PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const collect = (chunk: Buffer) => {
    out += chunk.toString();
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    child,
    out: () => out,
    exited,
    async waitFor(pattern, timeoutMs = 30_000) {
      const end = Date.now() + timeoutMs;
      while (!pattern.test(out)) {
        if (Date.now() > end || child.exitCode !== null)
          throw new Error(`no ${pattern} in the output of ${args.join(" ")}:\n${out}`);
        await Bun.sleep(50);
      }
      return out;
    },
  };
}

/** The environment of an installation of its own on the suite's Redis. */
function own(extra: Record<string, string> = {}): Record<string, string> {
  return { REDIS_URL: redis.url, A2A_REDIS_KEY_PREFIX: testPrefix(), A2A_CONFIG: "", ...extra };
}

async function stop(run: Run): Promise<void> {
  if (run.child.exitCode === null) run.child.kill("SIGTERM");
  await run.exited;
}

test("a second gateway on a busy port exits non-zero naming --port and A2A_SERVER_PORT; the first keeps serving", async () => {
  const port = await freePort();
  const env = own({ A2A_SERVER_HOST: "0.0.0.0" });
  const first = cli(["gateway", "--port", String(port)], { ...env, A2A_LOG_LEVEL: "info" });
  try {
    await first.waitFor(/gateway listening/);
    for (const host of ["0.0.0.0", "127.0.0.1"]) {
      const second = cli(["gateway", "--port", String(port)], { ...env, A2A_SERVER_HOST: host });
      expect(await second.exited).toBe(69);
      expect(second.out()).toContain(`Port ${port} on ${host} is already in use`);
      expect(second.out()).toContain("--port or A2A_SERVER_PORT");
      expect(second.out()).not.toContain("gateway listening");
    }
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    expect(first.child.exitCode).toBeNull();
  } finally {
    await stop(first);
  }
}, 60_000);

test("start binds loopback and says so, names its Redis, and a second start on a busy port revokes no key", async () => {
  const port = await freePort();
  const env = own();
  const first = cli(["start", "--port", String(port), "--actors", "1"], env);
  try {
    const out = await first.waitFor(/demo client key \(shown once\): (\S+)/);
    const key = /demo client key \(shown once\): (\S+)/.exec(out)?.[1] ?? "";
    expect(out).toContain(`serving on http://127.0.0.1:${port} (this machine only; --host 0.0.0.0 opens it to others)`);
    expect(out).toContain(`  redis: ${redis.url}`);

    // Bound to loopback only: the machine's other addresses do not answer.
    const bound = Bun.spawnSync(["ss", "-ltnH", `sport = :${port}`]).stdout.toString();
    if (bound.trim() !== "") expect(bound).toContain(`127.0.0.1:${port}`);
    expect(bound).not.toContain(`0.0.0.0:${port}`);

    const second = cli(["start", "--port", String(port), "--actors", "1"], env);
    expect(await second.exited).toBe(69);
    expect(second.out()).toContain("--port or A2A_SERVER_PORT");
    expect(second.out()).not.toContain("demo client key");

    // The first start's key still works.
    const answer = await fetch(`http://127.0.0.1:${port}/a2a/echo`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "a2a-version": "1.0", "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "SendMessage",
        params: { message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "still mine" }] } },
      }),
    });
    const body = (await answer.json()) as { result?: { task?: { status: { state: string } } } };
    expect(body.result?.task?.status.state).toBe("TASK_STATE_COMPLETED");
  } finally {
    await stop(first);
  }
}, 90_000);

test("start --host 0.0.0.0 says that other machines can reach it", async () => {
  const port = await freePort();
  const run = cli(["start", "--port", String(port), "--actors", "1", "--host", "0.0.0.0"], own());
  try {
    const out = await run.waitFor(/demo client key/);
    expect(out).toContain(`serving on http://127.0.0.1:${port} (bound to 0.0.0.0: every interface`);
  } finally {
    await stop(run);
  }
}, 60_000);

test("start with an embedded Redis prints the REDIS_URL to export", async () => {
  const dead = await freePort();
  const run = cli(["start", "--port", "0", "--actors", "1"], own({ REDIS_URL: `redis://127.0.0.1:${dead}` }));
  try {
    const out = await run.waitFor(/demo client key/);
    const embedded = /started an embedded redis-server at (\S+)/.exec(out)?.[1] ?? "missing";
    expect(out).toContain(`redis: an embedded redis-server at ${embedded}`);
    expect(out).toContain(`export REDIS_URL=${embedded}`);
  } finally {
    await stop(run);
  }
}, 60_000);

test("every command that needs Redis says in one line that it does not answer, with the password masked", async () => {
  const dead = await freePort();
  const env = own({ REDIS_URL: `redis://user:s3cret-pass@127.0.0.1:${dead}` });
  for (const args of [["gateway", "--port", "0"], ["work"], ["sweep", "--once"], ["clients", "list"], ["status"]]) {
    const run = cli(args, env);
    const code = await run.exited;
    const lines = run.out().trim().split("\n");
    expect({ args, code: code !== 0 }).toEqual({ args, code: true });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`redis://user:***@127.0.0.1:${dead}`);
    expect(lines[0]).toContain("ECONNREFUSED");
    expect(run.out()).not.toContain("s3cret-pass");
  }
}, 90_000);

test("an unknown A2A_* variable is warned about, with the variable it most likely meant", async () => {
  const run = cli(["clients", "list"], own({ A2A_SERVER_PROT: "9000", A2A_PORT: "9000" }));
  expect(await run.exited).toBe(0);
  expect(run.out()).toContain(
    "warning: A2A_SERVER_PROT is not a setting of a2a-runtime; it is ignored (did you mean A2A_SERVER_PORT?)",
  );
  expect(run.out()).toContain(
    "warning: A2A_PORT is not a setting of a2a-runtime; it is ignored (did you mean A2A_SERVER_PORT?)",
  );
}, 30_000);

test("a handler module that cannot be loaded stops work and start at once with its cause, in one line", async () => {
  const dir = tempDir("a2a-broken-");
  writeFileSync(join(dir, "broken.ts"), 'import { nothing } from "./missing-helper.ts";\nexport const x = nothing;\n');
  for (const args of [
    ["work", "--handlers", "./broken.ts"],
    ["start", "--port", "0", "--handlers", "./broken.ts"],
  ]) {
    const run = cli(args, own(), dir);
    expect(await run.exited).toBe(78);
    const lines = run.out().trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^handler module \S*broken\.ts cannot be loaded: /);
    expect(lines[0]).toContain("missing-helper");
    expect(run.out()).not.toContain("restart");
  }
}, 60_000);

test("a profile whose handler no module registers is an error at start-up of work, start and sweep", async () => {
  const dir = tempDir("a2a-unbound-");
  const config = join(dir, "config.json");
  const weather = {
    name: "weather",
    handler: "weather",
    description: "w",
    skill: { id: "w", name: "w", description: "w" },
  };
  writeFileSync(config, JSON.stringify({ profiles: [weather] }));
  for (const args of [["work"], ["start", "--port", "0"], ["sweep", "--once"]]) {
    const run = cli(args, own({ A2A_CONFIG: config }), dir);
    expect(await run.exited).toBe(78);
    expect(run.out()).toContain('profile "weather" names handler "weather", which no handler module registers');
    expect(run.out()).toContain("--handlers");
  }
}, 60_000);
