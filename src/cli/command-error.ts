// A command that cannot go on for a reason a person can fix: the entry prints its message as it is (no stack) and
// exits with its code (sysexits: 69 unavailable, 78 configuration).
export class CommandError extends Error {
  override readonly name = "CommandError";
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/** Something the command needs does not answer: Redis, a port (sysexits EX_UNAVAILABLE). */
export const EXIT_UNAVAILABLE = 69;
/** The configuration or a module it names cannot be used (sysexits EX_CONFIG). */
export const EXIT_CONFIG = 78;

/** Whether starting a server failed because its port is taken (Bun: EADDRINUSE; Deno: AddrInUse). */
export function isPortInUse(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return (
    code === "EADDRINUSE" || error.name === "AddrInUse" || /EADDRINUSE|address already in use/i.test(error.message)
  );
}

/** The one line for a gateway whose port is taken, naming the ways to choose another. */
export function portInUseError(host: string, port: number): CommandError {
  return new CommandError(
    `Port ${port} on ${host} is already in use (another gateway or program listens there). Choose another with ` +
      "--port or A2A_SERVER_PORT (server.port), or stop the other one.",
    EXIT_UNAVAILABLE,
  );
}
