// The one logger: structured JSON lines (pino). Secrets are redacted by path, and callers log ids, never keys.
import { type Logger, pino } from "pino";

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

/** A logger named for its process (`gateway`, `actor`, `supervisor`, `sweep`, `cli`) at the configured level. */
export function createLogger(name: string, level: string, destination?: NodeJS.WritableStream): Logger {
  const options = { name, level, redact: { paths: REDACT, censor: "[redacted]" }, base: { pid: process.pid } };
  return destination ? pino(options, destination as pino.DestinationStream) : pino(options);
}
