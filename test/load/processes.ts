// Child processes for the load drivers: servers under measurement run as real processes (never in the driver's event
// loop), their output is kept (last lines only), and every child is stopped by the driver, by pid, at the end.
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";

export interface Child {
  readonly name: string;
  readonly process: ChildProcess;
  readonly pid: number;
  /** The last lines the process wrote (stdout and stderr). */
  readonly lines: string[];
  /** Resolves with the first line (past or future) that matches, or rejects after `timeoutMs` or at exit. */
  line(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process has exited. */
  stop(graceMs?: number): Promise<void>;
  readonly exited: Promise<number | null>;
}

const KEPT_LINES = 400;
const running = new Set<Child>();

export function startChild(name: string, command: string[], env: Record<string, string>, cwd?: string): Child {
  const [file = "", ...args] = command;
  const proc = spawn(file, args, { env, stdio: ["ignore", "pipe", "pipe"], ...(cwd ? { cwd } : {}) });
  const lines: string[] = [];
  const watchers = new Set<(line: string) => void>();
  const collect = (stream: NodeJS.ReadableStream | null) => {
    let pending = "";
    stream?.on("data", (chunk: Buffer) => {
      pending += chunk.toString("utf8");
      const parts = pending.split("\n");
      pending = parts.pop() ?? "";
      for (const line of parts) {
        lines.push(line);
        if (lines.length > KEPT_LINES) lines.shift();
        for (const watcher of watchers) watcher(line);
      }
    });
  };
  collect(proc.stdout);
  collect(proc.stderr);
  const exited = new Promise<number | null>((resolve) => proc.on("exit", (code) => resolve(code)));
  const child: Child = {
    name,
    process: proc,
    pid: proc.pid ?? 0,
    lines,
    exited,
    line(pattern, timeoutMs = 15_000) {
      const seen = lines.find((line) => pattern.test(line));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const done = (error?: Error, line?: string) => {
          clearTimeout(timer);
          watchers.delete(watch);
          if (error) reject(error);
          else resolve(line ?? "");
        };
        const watch = (line: string) => {
          if (pattern.test(line)) done(undefined, line);
        };
        const timer = setTimeout(
          () =>
            done(
              new Error(`${name}: no line matching ${pattern} within ${timeoutMs} ms\n${lines.slice(-20).join("\n")}`),
            ),
          timeoutMs,
        );
        watchers.add(watch);
        void exited.then((code) =>
          done(
            new Error(
              `${name} exited (code ${code}) before a line matching ${pattern}\n${lines.slice(-20).join("\n")}`,
            ),
          ),
        );
      });
    },
    async stop(graceMs = 10_000) {
      if (proc.exitCode !== null || proc.signalCode !== null) {
        running.delete(child);
        return;
      }
      proc.kill("SIGTERM");
      const timer = setTimeout(() => proc.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
      running.delete(child);
    },
  };
  running.add(child);
  return child;
}

/** Kills every child still running (SIGKILL, by pid): the driver's last resort on an error or a signal. */
export function killAll(): void {
  for (const child of running) {
    if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill("SIGKILL");
  }
  running.clear();
}

/** Resident set size of a process, in bytes (Linux /proc); NaN where it cannot be read. */
export function rssBytes(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** CPU seconds (user + system) a process used so far (Linux /proc); NaN where it cannot be read. */
export function cpuSeconds(pid: number): number {
  return statCpuSeconds(`/proc/${pid}/stat`);
}

/** CPU seconds of a process's main thread alone (its JS thread; not the JIT's, GC's or allocator's threads). */
export function mainThreadCpuSeconds(pid: number): number {
  return statCpuSeconds(`/proc/${pid}/task/${pid}/stat`);
}

function statCpuSeconds(file: string): number {
  try {
    const fields = readFileSync(file, "utf8").split(") ")[1]?.split(" ") ?? [];
    const ticks = Number(fields[11]) + Number(fields[12]);
    return ticks / 100;
  } catch {
    return Number.NaN;
  }
}

/** The child processes of `pid` (Linux /proc); empty where they cannot be read. */
export function childrenOf(pid: number): number[] {
  try {
    const text = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8");
    return text.trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Polls `probe` every `intervalMs` until it returns a value, or throws after `timeoutMs`. */
export async function waitFor<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
  what: string,
  intervalMs = 20,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await Bun.sleep(intervalMs);
  }
}
