// The one logger: structured JSON lines (pino) at the configured level; readable colored lines instead when stderr is
// a terminal and CI is not set (pino-pretty, when installed). Secrets are redacted by path; callers log ids, never keys.
import { createRequire } from "node:module";
import { type DestinationStream, type Logger, pino } from "pino";

export type { Logger };

const REDACT = [
  "apiKey",
  "key",
  "authorization",
  "headers.authorization",
  "*.authorization",
  "credentials",
  "*.credentials",
  "authentication.credentials",
  "*.authentication.credentials",
  "token",
  "*.token",
  "secret",
  "*.secret",
];

type PrettyFactory = (options: Record<string, unknown>) => DestinationStream;

/**
 * Whether a process logs for a person: stderr is a terminal and it is not a CI run. Entry files call it with their
 * own stderr and environment; this module reads neither.
 */
export function wantsPrettyLogs(
  stderr: { isTTY?: boolean },
  env: Readonly<Record<string, string | undefined>>,
): boolean {
  return stderr.isTTY === true && (env.CI ?? "") === "" && env.A2A_LOG_FORMAT !== "json";
}

/** pino-pretty's stream to stderr, or undefined when the package is not installed (the JSON lines stay). */
export function prettyDestination(): DestinationStream | undefined {
  try {
    const loaded = createRequire(import.meta.url)("pino-pretty") as PrettyFactory | { default: PrettyFactory };
    const pretty = typeof loaded === "function" ? loaded : loaded.default;
    return pretty({
      destination: 2,
      sync: true,
      colorize: true,
      translateTime: "SYS:HH:MM:ss.l",
      ignore: "pid,hostname",
    });
  } catch {
    return undefined;
  }
}

/**
 * A logger named for its process (`gateway`, `actor`, `supervisor`, `sweep`, `cli`) at the configured level. `output`:
 * a stream to write JSON lines to, or `{ pretty: true }` for readable lines on stderr (an entry decides, see
 * wantsPrettyLogs); by default JSON lines on stdout.
 */
export function createLogger(
  name: string,
  level: string,
  output?: NodeJS.WritableStream | { pretty: boolean },
): Logger {
  const options = { name, level, redact: { paths: REDACT, censor: "[redacted]" }, base: { pid: process.pid } };
  if (output && "write" in output) return pino(options, output as DestinationStream);
  const pretty = output?.pretty ? prettyDestination() : undefined;
  return pretty ? pino(options, pretty) : pino(options);
}

/**
 * `logger.child(bindings)`, made when first used. A child costs a few µs (its bindings pass the redaction), and a
 * run's child mostly never logs: a run that only succeeds pays nothing for it.
 */
export function lazyChild(logger: Logger, bindings: Record<string, unknown>): Logger {
  let child: Logger | undefined;
  return new Proxy(logger, {
    get(_, property) {
      child ??= logger.child(bindings);
      const value: unknown = Reflect.get(child, property, child);
      return typeof value === "function" ? value.bind(child) : value;
    },
  });
}
