// Versions and machine facts for the report: the runtime, redis-server, our package, the peers' packages, the CPU.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";

const ROOT = new URL("../../", import.meta.url);

/** The installed version of a package (from node_modules), or "?" when it cannot be read. */
export function packageVersion(name: string): string {
  try {
    const file = new URL(`node_modules/${name}/package.json`, ROOT);
    return String((JSON.parse(readFileSync(file, "utf8")) as { version?: unknown }).version ?? "?");
  } catch {
    return "?";
  }
}

function firstLine(command: string, args: string[]): string {
  const run = spawnSync(command, args, { encoding: "utf8" });
  return (run.stdout || run.stderr || "").trim().split("\n")[0] ?? "";
}

export interface Machine {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  kernel: string;
}

export function machine(): Machine {
  const list = cpus();
  return {
    cpuModel: list[0]?.model ?? "unknown",
    cores: list.length,
    memoryGiB: totalmem() / 1024 ** 3,
    kernel: firstLine("uname", ["-sr"]),
  };
}

export function versions(): [string, string][] {
  const ours = (JSON.parse(readFileSync(new URL("package.json", ROOT), "utf8")) as { version: string }).version;
  return [
    ["a2a-runtime", ours],
    ["Bun", Bun.version],
    ["Node (peers on Node)", firstLine("node", ["--version"])],
    ["redis-server", firstLine("redis-server", ["--version"])],
    ["redis-benchmark", firstLine("redis-benchmark", ["--version"])],
    ["@a2a-js/sdk", packageVersion("@a2a-js/sdk")],
    ["express", packageVersion("express")],
    ["bullmq", packageVersion("bullmq")],
    ["ioredis", packageVersion("ioredis")],
    ["elysia", packageVersion("elysia")],
  ];
}
