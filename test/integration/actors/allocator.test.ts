// The processes the command line starts keep freed memory (src/cli/allocator.ts): on Bun the entry starts itself again
// in place with mimalloc's purge delay set, unless the environment sets it, and the supervisor's actors inherit it.
// Read from /proc: the environment a process was started with, and its command line.
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { PURGE_DELAY_DEFAULT, PURGE_DELAY_VARIABLE } from "../../../src/cli/allocator.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import { cleanup, type Installation, installation, killStarted, liveWorkers, startCli } from "./harness.ts";

let server: TestRedis;
const installs: Installation[] = [];
beforeAll(async () => {
  server = await startRedis();
});
afterEach(() => killStarted());
afterAll(async () => {
  killStarted();
  for (const inst of installs) cleanup(inst);
  await server.stop();
});

async function fresh(): Promise<Installation> {
  const inst = await installation(server);
  // whatever the test runner's environment says, these processes start without the variable unless a test sets it
  delete inst.env[PURGE_DELAY_VARIABLE];
  installs.push(inst);
  return inst;
}

function procFile(pid: number, file: string): string[] {
  return readFileSync(`/proc/${pid}/${file}`, "utf8").split("\0");
}

function environment(pid: number): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of procFile(pid, "environ")) {
    const at = entry.indexOf("=");
    if (at > 0) env[entry.slice(0, at)] = entry.slice(at + 1);
  }
  return env;
}

test("work runs with the purge delay off, in the process that was started, and so do its actors", async () => {
  const inst = await fresh();
  const work = startCli(inst, ["work", "--actors", "1"]);
  const [actor] = (await liveWorkers(inst, 1)).filter((worker) => worker.mode === "consume");
  // the pid the operator's process manager knows is the one that serves (execve, not a child)
  expect(environment(work.pid)[PURGE_DELAY_VARIABLE]).toBe(PURGE_DELAY_DEFAULT);
  expect(procFile(work.pid, "cmdline")).toContain("work");
  expect(actor).toBeDefined();
  expect(environment(actor?.pid ?? 0)[PURGE_DELAY_VARIABLE]).toBe(PURGE_DELAY_DEFAULT);
});

test("an operator's own purge delay is kept, for work and its actors", async () => {
  const inst = await fresh();
  const work = startCli(inst, ["work", "--actors", "1"], { [PURGE_DELAY_VARIABLE]: "250" });
  const [actor] = (await liveWorkers(inst, 1)).filter((worker) => worker.mode === "consume");
  expect(environment(work.pid)[PURGE_DELAY_VARIABLE]).toBe("250");
  expect(environment(actor?.pid ?? 0)[PURGE_DELAY_VARIABLE]).toBe("250");
});

test("the runtime's own flags survive the restart", async () => {
  const inst = await fresh();
  const work = startCli(inst, ["work", "--actors", "1"], {}, ["--smol"]);
  await liveWorkers(inst, 1);
  const cmdline = procFile(work.pid, "cmdline");
  expect(environment(work.pid)[PURGE_DELAY_VARIABLE]).toBe(PURGE_DELAY_DEFAULT);
  expect(cmdline).toContain("--smol");
  expect(cmdline.indexOf("--smol")).toBeLessThan(cmdline.findIndex((arg) => arg.endsWith("src/cli.ts")));
  expect(cmdline).toContain("work");
});
