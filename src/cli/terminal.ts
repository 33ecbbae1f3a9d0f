// Where the client commands write: the answer on stdout, progress and errors on stderr, and whether both are a terminal
// (then `send --stream` draws a status line). Tests pass their own.
export interface Terminal {
  /** Writes to standard output as is (no line end added). */
  out(text: string): void;
  /** Writes to standard error as is. */
  err(text: string): void;
  /** Standard output and standard error are both a terminal. */
  readonly tty: boolean;
  /** All of standard input when it is not a terminal; undefined when it is one. */
  readInput(): Promise<string | undefined>;
}

export function processTerminal(): Terminal {
  return {
    out: (text) => {
      process.stdout.write(text);
    },
    err: (text) => {
      process.stderr.write(text);
    },
    tty: process.stdout.isTTY === true && process.stderr.isTTY === true,
    readInput: async () => {
      if (process.stdin.isTTY) return undefined;
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
      return Buffer.concat(chunks).toString("utf8");
    },
  };
}
