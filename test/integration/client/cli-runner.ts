// Runs `bun src/cli.ts …` as a child process the way a person or a script does, collecting stdout and stderr as they
// arrive (a test can wait for a line before it moves the task on) with a hard time limit.
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunningCli {
  /** Resolves when the process has written `text` to stdout (or stderr); rejects after `timeoutMs`. */
  waitFor(text: string, timeoutMs?: number): Promise<void>;
  readonly done: Promise<CliResult>;
}

/** Environment for the child: the runner's own minus any A2A_API_KEY it may hold, plus `env`. */
export function cliEnv(env: Record<string, string | undefined>): Record<string, string> {
  const merged: Record<string, string | undefined> = { ...process.env, A2A_API_KEY: undefined, ...env };
  return Object.fromEntries(Object.entries(merged).filter((e): e is [string, string] => e[1] !== undefined));
}

async function collect(stream: ReadableStream<Uint8Array>, sink: (text: string) => void): Promise<void> {
  const decoder = new TextDecoder();
  for await (const chunk of stream) sink(decoder.decode(chunk, { stream: true }));
}

export function startCli(args: string[], env: Record<string, string | undefined>, timeoutMs = 20_000): RunningCli {
  const child = Bun.spawn([process.execPath, "src/cli.ts", ...args], {
    cwd: ROOT,
    env: cliEnv(env),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const output = { stdout: "", stderr: "" };
  const reading = Promise.all([
    collect(child.stdout, (text) => {
      output.stdout += text;
    }),
    collect(child.stderr, (text) => {
      output.stderr += text;
    }),
  ]);
  const killer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  const done = (async () => {
    const code = await child.exited;
    await reading;
    clearTimeout(killer);
    return { code: child.signalCode ? null : code, ...output };
  })();
  return {
    done,
    async waitFor(text, wait = 10_000) {
      const end = Date.now() + wait;
      while (!output.stdout.includes(text) && !output.stderr.includes(text)) {
        if (Date.now() > end || child.exitCode !== null)
          throw new Error(
            `the CLI did not print ${JSON.stringify(text)}; stdout: ${output.stdout}; stderr: ${output.stderr}`,
          );
        await Bun.sleep(20);
      }
    },
  };
}

export function runCli(
  args: string[],
  env: Record<string, string | undefined>,
  timeoutMs?: number,
): Promise<CliResult> {
  return startCli(args, env, timeoutMs).done;
}
