// docs/quickstart.md's "Your own agent in five minutes", run as written: `npm pack` of this checkout installed into a
// fresh project, `a2a-runtime init`, nothing edited, `start`, and the scaffolded handler's answer through `send` and
// through @a2a-js/sdk's client; the project's tsc accepts the handler against the package's type declarations.
// Substitutions, and only these: the tarball is this checkout's, installed without the registry (see
// packed-install.ts); port 8080 is a free port; the key is the one `start` printed; Redis is the test's.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { type Message, Role, type Task } from "@a2a-js/sdk";
import {
  ClientFactory,
  ClientFactoryOptions,
  createAuthenticatingFetchWithRetry,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";
import { installTarball, packTarball } from "../../support/packed-install.ts";
import { freePort, startRedis, type TestRedis, testPrefix } from "../../support/redis.ts";
import { tempDir } from "../../support/temp-dir.ts";

const ROOT = join(import.meta.dir, "../../..");
const SECTION = "## Your own agent in five minutes";

interface Section {
  shell: string[][];
  handler: string;
  expected: string;
}

/** The section's ```sh blocks (a list of lines each), its ```ts block and the ```console block it expects. */
function readSection(): Section {
  const doc = readFileSync(join(ROOT, "docs/quickstart.md"), "utf8");
  const start = doc.indexOf(SECTION);
  const next = doc.indexOf("\n## ", start + SECTION.length);
  const text = doc.slice(start, next === -1 ? undefined : next);
  const blocks = [...text.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1], body: m[2] ?? "" }));
  const lines = (body: string) => body.split("\n").filter((line) => line.trim() !== "");
  return {
    shell: blocks.filter((b) => b.lang === "sh").map((b) => lines(b.body)),
    handler: blocks.find((b) => b.lang === "ts")?.body ?? "",
    expected: blocks.find((b) => b.lang === "console")?.body.trim() ?? "",
  };
}

let redis: TestRedis;
let started: ChildProcess | undefined;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  if (started && started.exitCode === null) {
    const exited = new Promise((resolve) => started?.once("exit", resolve));
    started.kill("SIGTERM");
    await exited;
  }
  await redis.stop();
});

test("the quick start's own agent: pack, install, init, start, then send and the SDK's client get the answer", async () => {
  const section = readSection();
  expect(section.shell.length).toBeGreaterThanOrEqual(3);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  // The checkout's own tools leave the PATH: the project must run on what it installed.
  const PATH = (process.env.PATH ?? "")
    .split(delimiter)
    .filter((dir) => !dir.startsWith(join(ROOT, "node_modules")))
    .join(delimiter);
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    PATH,
    REDIS_URL: redis.url,
    A2A_REDIS_KEY_PREFIX: testPrefix(),
    A2A_SERVER_PORT: String(port),
    A2A_WORKER_METRICS_PORT: "0",
    A2A_LOG_LEVEL: "warn",
  };
  delete env.A2A_CONFIG;
  let cwd = tempDir("a2a-quickstart-");
  let lastOutput = "";

  const sh = (line: string) => {
    const run = spawnSync("sh", ["-c", line.replaceAll("http://127.0.0.1:8080", base)], { cwd, env, encoding: "utf8" });
    expect({ line, status: run.status, stderr: run.status === 0 ? "" : run.stderr }).toEqual({
      line,
      status: 0,
      stderr: "",
    });
    return run.stdout;
  };

  for (const block of section.shell) {
    for (const line of block) {
      const command = line.replace(/\s+#.*$/, "");
      const mkdir = /^mkdir (\S+) && cd \1$/.exec(command);
      if (mkdir) {
        cwd = join(cwd, mkdir[1] ?? "");
        mkdirSync(cwd);
      } else if (/^npm install \S+\.tgz$/.test(command)) {
        installTarball(packTarball(), cwd);
      } else if (/^npx a2a-runtime start\b/.test(command)) {
        const child = spawn("sh", ["-c", command], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
        started = child;
        let out = "";
        child.stdout?.on("data", (chunk: Buffer) => {
          out += chunk.toString();
        });
        child.stderr?.on("data", (chunk: Buffer) => {
          out += chunk.toString();
        });
        const end = Date.now() + 40_000;
        while (!/demo client key \(shown once\): \S+/.test(out)) {
          if (Date.now() > end || child.exitCode !== null) throw new Error(`start did not serve:\n${out}`);
          await Bun.sleep(50);
        }
        env.A2A_API_KEY = /demo client key \(shown once\): (\S+)/.exec(out)?.[1] ?? "";
        expect(out).toContain(`serving on ${base}`);
        expect(out).toContain(`profile hello: POST ${base}/a2a/hello  (handler hello)`);
      } else if (/^export A2A_API_KEY=/.test(command)) {
        expect(env.A2A_API_KEY).toMatch(/^a2a_/);
      } else {
        lastOutput = sh(command);
      }
    }
  }

  // The last command was send: its output is the one the section shows.
  expect(lastOutput.trim()).toBe(section.expected);
  expect(section.expected).toBe("Hello, Ada! Welcome to a2a-runtime.");
  // The handler the section shows is the one init wrote.
  expect(readFileSync(join(cwd, "handlers/hello.ts"), "utf8")).toContain(section.handler);

  // The same answer through the official SDK's client, which finds the profile through the agent card.
  const key = env.A2A_API_KEY ?? "";
  const fetchImpl = createAuthenticatingFetchWithRetry(fetch, {
    headers: async () => ({ Authorization: `Bearer ${key}` }),
    shouldRetryWithHeaders: async () => undefined,
  });
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
    }),
  );
  const sdk = await factory.createFromUrl(base);
  const message: Message = {
    messageId: crypto.randomUUID(),
    contextId: "",
    taskId: "",
    role: Role.ROLE_USER,
    parts: [{ content: { $case: "text", value: "Grace" }, metadata: undefined, filename: "", mediaType: "" }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
  const task = (await sdk.sendMessage({ tenant: "", message, configuration: undefined, metadata: undefined })) as Task;
  const texts = task.artifacts.flatMap((a) => a.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")));
  expect(texts).toEqual(["Hello, Grace! Welcome to a2a-runtime."]);

  // The project's tsc checks the handler against the declarations the package ships (and would reject a misuse).
  const tsc = spawnSync(join(ROOT, "node_modules/.bin/tsc"), ["-p", cwd], { cwd, encoding: "utf8" });
  expect(tsc.stdout + tsc.stderr).toBe("");
  expect(tsc.status).toBe(0);
}, 120_000);
